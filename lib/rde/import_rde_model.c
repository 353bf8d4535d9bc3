/* roboest import-rde: the URDF found and checked against the configuration, and the paths written into the
 * pipeline (see rde_internal.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rde_internal.h"
#include "roboest/dynamics.h"

/* ---- the URDF and the model --------------------------------------------------------------------------------- */
bool rde_is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* urdf_path tried at B/urdf_path and B/<file name> for B = DIR, DIR/.., DIR/../..; the first file found. */
int rde_find_urdf(rde *r, const char *dir)
{
    const char *rel = r->urdf_path, *name = rb_path_basename(r->urdf_path);
    char *tried[6] = {0};
    size_t n = 0;
    int rc = RB_OK;
    if (rel[0] == '/') {
        tried[n++] = rb_strdup(rel);
    } else {
        const char *ups[] = {"", "../", "../../"};
        for (size_t u = 0; u < 3; u++) {
            tried[n++] = rb_asprintf("%s/%s%s", dir, ups[u], rel);
            if (name != rel)
                tried[n++] = rb_asprintf("%s/%s%s", dir, ups[u], name);
        }
    }
    for (size_t i = 0; i < n && !r->urdf; i++) {
        if (!tried[i])
            rc = rb_err_set(r->err, RB_ENOMEM, "out of memory");
        else if (rde_is_file(tried[i]))
            r->urdf = tried[i], tried[i] = NULL;
    }
    if (!rc && !r->urdf) {
        char list[RB_ERR_MSG_MAX] = "";
        for (size_t i = 0; i < n; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", tried[i]);
        rc = rde_fail_at(
            r, RB_ENOTFOUND, r->urdf_entry,
            "urdf_path '%s': no such file (tried %s); give the URDF's path (roboest import-rde --urdf PATH)", rel,
            list);
    }
    for (size_t i = 0; i < n; i++)
        rb_free(tried[i]);
    return rc;
}

/* Names of joint_list and base_link checked on the whole model first, so a miss names the ini line. */
static int check_names_in_urdf(rde *r)
{
    rb_model *full = NULL;
    int rc = rb_model_load_urdf(r->urdf, NULL, &full, r->err);
    for (size_t j = 0; !rc && j < r->n; j++)
        if (rb_model_dof_index(full, r->joints[j]) < 0)
            rc = rde_fail_at(r, RB_ENOTFOUND, r->joints_entry, "joint_list: '%s' is not a movable joint of %s",
                             r->joints[j], r->urdf);
    if (!rc && rb_model_frame_index(full, r->base) < 0)
        rc = rde_fail_at(r, RB_ENOTFOUND, r->base_entry, "base_link: '%s' is not a link of %s", r->base, r->urdf);
    rb_model_free(full);
    return rc;
}

static int check_frame(rde *r, const rb_ini_group *g, const char *key, const char *frame)
{
    if (rb_model_frame_index(r->model, frame) >= 0)
        return RB_OK;
    return rde_fail_at(r, RB_ENOTFOUND, rb_ini_entry_find(g, key), "[%s] %s: '%s' is not a frame of %s", g->name, key,
                       frame, r->urdf);
}

static int check_ft_sensors(rde *r)
{
    const rb_ini_entry *names = rb_ini_entry_find(r->ft_group, "names");
    for (size_t i = 0; i < r->n_ft; i++) {
        long s = rb_model_ft_index(r->model, r->ft[i]);
        if (s < 0)
            return rde_fail_at(r, RB_ENOTFOUND, names, "[FT] names: '%s' is not a force/torque sensor of %s", r->ft[i],
                               r->urdf);
        if (r->ft_joints && strcmp(r->ft_joints[i], r->model->ft[s].joint_name) != 0)
            return rde_fail_at(r, RB_ECONFIG, rb_ini_entry_find(r->ft_group, "associated_joints"),
                               "[FT] associated_joints: '%s' is not the joint of sensor '%s' ('%s' is)",
                               r->ft_joints[i], r->ft[i], r->model->ft[s].joint_name);
        if (r->ft_frames && rb_model_frame_index(r->model, r->ft_frames[i]) < 0) {
            const rb_ini_entry *e = rb_ini_entry_find(r->ft_group, "frames");
            int rc = rde_note(r,
                              "%s:%zu: [FT] frames: '%s' is not a frame of %s; not needed: the reading of '%s' is "
                              "expressed in the frame its URDF <sensor> declares",
                              e->file, e->line, r->ft_frames[i], r->urdf, r->ft[i]);
            if (rc)
                return rc;
        }
    }
    return RB_OK;
}

/* A contact on the base body of its sub-model (the tree cut at the FT sensors) moves no joint of it: in the
 * public estimator's process model (each sub-model's joint accelerations, its base acceleration known) nothing
 * depends on that contact state, so it is a random walk no measurement sees. Worth a note, not an error. */
static int note_unobserved_contacts(rde *r)
{
    rb_submodels *sm = NULL;
    int rc = rb_submodels_build(r->model, r->ft, r->n_ft, &sm, r->err);
    const rb_ini_entry *e = r->contact_group ? rb_ini_entry_find(r->contact_group, "frames") : NULL;
    for (size_t i = 0; !rc && i < r->n_c; i++) {
        int body = r->model->frames[rb_model_frame_index(r->model, r->contacts[i])].body;
        const rb_submodel *sub = &sm->sub[sm->body_sub[body]];
        if (body == sub->base)
            rc = rde_note(r,
                          "%s:%zu: contact '%s' is on the base body (%s) of its sub-model%s: no joint acceleration "
                          "depends on it, so its state is unobserved (carried over as configured)",
                          e->file, e->line, r->contacts[i], r->model->bodies[body].name,
                          sub->n_dofs ? "" : ", which has no joint");
    }
    rb_submodels_free(sm);
    return rc;
}

int rde_load_model(rde *r)
{
    int rc = check_names_in_urdf(r);
    rb_model_opts o = {.joints = r->joints, .n_joints = r->n, .base = r->base};
    if (!rc)
        rc = rb_model_load_urdf(r->urdf, &o, &r->model, r->err);
    if (!rc)
        rc = check_ft_sensors(r);
    for (size_t i = 0; !rc && i < r->n_c; i++)
        rc = check_frame(r, r->contact_group, "frames", r->contacts[i]);
    rde_imus *imus[] = {&r->acc, &r->gyro};
    for (size_t k = 0; k < 2; k++)
        for (size_t i = 0; !rc && i < imus[k]->n; i++)
            if (imus[k]->used[i])
                rc = check_frame(r, imus[k]->group, "frames", imus[k]->frames[i]);
    return rc ? rc : note_unobserved_contacts(r);
}

/* ---- paths -------------------------------------------------------------------------------------------------- */
/* `to` (a file) relative to the folder `from_dir`, both made canonical first. */
int rde_relative_path(rde *r, const char *from_dir, const char *to, char **out)
{
    char *a = realpath(from_dir, NULL), *b = realpath(to, NULL);
    int rc = RB_OK;
    *out = NULL;
    if (!a)
        rc = rb_err_set(r->err, RB_EIO, "%s: folder does not exist", from_dir);
    else if (!b)
        rc = rb_err_set(r->err, RB_ENOTFOUND, "%s: cannot resolve the path", to);
    else if (!(*out = rb_path_between(a, b)))
        rc = rb_err_set(r->err, RB_ENOMEM, "out of memory");
    free(a);
    free(b);
    return rc;
}

/* Directory part of a file path ("." when it has none). */
char *rde_folder_of(const char *path)
{
    const char *base = rb_path_basename(path);
    if (base == path)
        return rb_strdup(".");
    if (base == path + 1)
        return rb_strdup("/");
    return rb_strndup(path, (size_t)(base - path - 1));
}
