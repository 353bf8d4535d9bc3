/* The stage types' documentation: the registry's checks, the parameter texts `roboest stages` prints and the
 * Markdown reference (rb_registry_markdown). */
#include <criterion/criterion.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "roboest/estimators.h"
#include "support.h"

static int probe_create(const rb_stage_setup *setup, void **state, rb_err *err)
{
    (void)err;
    setup->out[0] = setup->in[0];
    *state = NULL;
    return RB_OK;
}

static int probe_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    (void)state, (void)k, (void)t, (void)in, (void)out, (void)err;
    return RB_OK;
}

static const char *const probe_in[] = {"x", "aux"};
static const char *const probe_in_docs[] = {"n values, rad: the signal", "n values: a | b"};
static const char *const probe_out[] = {"y"};
static const char *const probe_out_docs[] = {"n values, as x"};
static const char *const probe_modes[] = {"fast", "exact", NULL};
static const double probe_weights[] = {0.5, 1e-6};
static const rb_param_spec probe_params[] = {
    {.name = "gain", .kind = RB_PARAM_NUMBER, .required = true, .has_min = true, .min_exclusive = true, .doc = "gain"},
    {.name = "order",
     .kind = RB_PARAM_INTEGER,
     .def_number = 1,
     .has_min = true,
     .min = 1,
     .has_max = true,
     .max = 2,
     .doc = "order",
     .details = "`|x|` below 2"},
    {.name = "verbose", .kind = RB_PARAM_BOOLEAN, .doc = "talk"},
    {.name = "mode", .kind = RB_PARAM_STRING, .def_string = "fast", .choices = probe_modes, .doc = "mode"},
    {.name = "weights",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = probe_weights,
     .def_count = 2,
     .has_min = true,
     .min = 0,
     .doc = "weights"},
    {.name = "labels", .kind = RB_PARAM_STRING_ARRAY, .choices = probe_modes, .doc = "labels"},
};
static const rb_stage_type probe_type = {
    .version = RB_STAGE_TYPE_VERSION,
    .name = "probe",
    .summary = "a test stage",
    .doc = "It computes y = x:\n"
           "\n"
           "    y_k = x_k\n",
    .inputs = probe_in,
    .input_docs = probe_in_docs,
    .n_inputs = 2,
    .optional_inputs = 1u << 1,
    .outputs = probe_out,
    .output_docs = probe_out_docs,
    .n_outputs = 1,
    .params = probe_params,
    .n_params = sizeof probe_params / sizeof probe_params[0],
    .create = probe_create,
    .step = probe_step,
};

static char *text_of(int (*fn)(const rb_param_spec *, char **, rb_err *), const rb_param_spec *ps)
{
    char *s = NULL;
    rb_err err;
    cr_assert_eq(fn(ps, &s, &err), RB_OK, "%s", err.msg);
    return s;
}

static void expect_texts(const rb_param_spec *ps, const char *def, const char *bounds)
{
    char *d = text_of(rb_param_default_text, ps), *b = text_of(rb_param_bounds_text, ps);
    cr_expect_str_eq(d, def, "%s: default", ps->name);
    cr_expect_str_eq(b, bounds, "%s: bounds", ps->name);
    rb_free(d);
    rb_free(b);
}

Test(stage_doc, parameter_texts_are_what_the_listing_prints)
{
    expect_texts(&probe_params[0], "", "> 0");
    expect_texts(&probe_params[1], "1", ">= 1, <= 2");
    expect_texts(&probe_params[2], "false", "");
    expect_texts(&probe_params[3], "\"fast\"", "one of \"fast\" \"exact\"");
    expect_texts(&probe_params[4], "[0.5, 1e-06]", ">= 0");
    expect_texts(&probe_params[5], "", "one of \"fast\" \"exact\""); /* string arrays: no default shown */
    rb_param_spec max_only = {
        .name = "p", .kind = RB_PARAM_NUMBER, .def_number = 0.25, .has_max = true, .max_exclusive = true, .max = 1};
    expect_texts(&max_only, "0.25", "< 1");
}

Test(stage_doc, numbers_use_a_dot_in_any_locale)
{
    char dir[] = "/tmp/rb_locale_XXXXXX";
    cr_assert(test_decimal_comma_locale(LC_ALL, dir), "a decimal-comma locale (localedef, Debian's locales)");
    char probe[16];
    snprintf(probe, sizeof probe, "%.1f", 0.5);
    cr_assert_str_eq(probe, "0,5", "the locale really uses a decimal comma");
    char *d = text_of(rb_param_default_text, &probe_params[4]);
    rb_registry *reg = NULL;
    rb_err err;
    char *md = NULL;
    cr_assert_eq(rb_registry_new(&reg, &err), RB_OK);
    cr_assert_eq(rb_registry_add(reg, &probe_type, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_registry_markdown(reg, &md, &err), RB_OK, "%s", err.msg);
    test_locale_restore(LC_ALL, dir);
    cr_expect_str_eq(d, "[0.5, 1e-06]");
    cr_expect(strstr(md, "`[0.5, 1e-06]`"), "%s", md);
    rb_free(d);
    rb_free(md);
    rb_registry_free(reg);
}

Test(stage_doc, markdown_of_a_type)
{
    rb_registry *reg = NULL;
    rb_err err;
    char *md = NULL;
    cr_assert_eq(rb_registry_new(&reg, &err), RB_OK);
    cr_assert_eq(rb_registry_add(reg, &probe_type, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_registry_markdown(reg, &md, &err), RB_OK, "%s", err.msg);
    cr_expect_str_eq(md, "### `probe`\n"
                         "\n"
                         "a test stage\n"
                         "\n"
                         "It computes y = x:\n"
                         "\n"
                         "    y_k = x_k\n"
                         "\n"
                         "| input | wiring | width, unit, meaning |\n"
                         "| --- | --- | --- |\n"
                         "| `x` | required | n values, rad: the signal |\n"
                         "| `aux` | optional | n values: a \\| b |\n"
                         "\n"
                         "| output | width, unit, meaning |\n"
                         "| --- | --- |\n"
                         "| `y` | n values, as x |\n"
                         "\n"
                         "| param | kind | required / default | bounds, choices | meaning |\n"
                         "| --- | --- | --- | --- | --- |\n"
                         "| `gain` | number | required | > 0 | gain |\n"
                         "| `order` | integer | `1` | >= 1, <= 2 | order; `\\|x\\|` below 2 |\n"
                         "| `verbose` | boolean | `false` |  | talk |\n"
                         "| `mode` | string | `\"fast\"` | one of \"fast\" \"exact\" | mode |\n"
                         "| `weights` | number array | `[0.5, 1e-06]` | >= 0 | weights |\n"
                         "| `labels` | string array | optional | one of \"fast\" \"exact\" | labels |\n");
    rb_free(md);

    /* a type without docs or parameters still renders; two types come in name order, a blank line apart */
    rb_stage_type bare = probe_type;
    bare.name = "a_bare";
    bare.doc = NULL, bare.input_docs = NULL, bare.output_docs = NULL, bare.n_params = 0;
    cr_assert_eq(rb_registry_add(reg, &bare, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_registry_markdown(reg, &md, &err), RB_OK, "%s", err.msg);
    const char *head = "### `a_bare`\n"
                       "\n"
                       "a test stage\n"
                       "\n"
                       "| input | wiring | width, unit, meaning |\n"
                       "| --- | --- | --- |\n"
                       "| `x` | required |  |\n"
                       "| `aux` | optional |  |\n"
                       "\n"
                       "| output | width, unit, meaning |\n"
                       "| --- | --- |\n"
                       "| `y` |  |\n"
                       "\n"
                       "No parameters.\n"
                       "\n"
                       "### `probe`\n";
    cr_expect(strncmp(md, head, strlen(head)) == 0, "%s", md);
    rb_free(md);
    rb_registry_free(reg);
}

Test(stage_doc, markdown_survives_allocation_failures)
{
    rb_registry *reg = NULL;
    rb_err err;
    cr_assert_eq(rb_registry_new(&reg, &err), RB_OK);
    cr_assert_eq(rb_registry_add(reg, &probe_type, &err), RB_OK, "%s", err.msg);
    int rc = RB_ENOMEM;
    for (long n = 0; rc != RB_OK && n < 100; n++) {
        char *md = (char *)"untouched";
        rb_alloc_fail_after(n);
        rc = rb_registry_markdown(reg, &md, &err);
        rb_alloc_fail_after(-1);
        cr_assert(rc == RB_OK || rc == RB_ENOMEM, "after %ld allocations: %d", n, rc);
        if (rc == RB_OK) {
            cr_expect(strstr(md, "### `probe`"));
            rb_free(md);
        } else {
            cr_expect_null(md, "after %ld allocations: no text on failure", n);
            cr_expect_str_eq(err.msg, "out of memory");
        }
    }
    cr_expect_eq(rc, RB_OK, "succeeds once allocations do");
    for (long n = 0; n < 4; n++) {
        char *s = NULL;
        rb_alloc_fail_after(n);
        rc = rb_param_bounds_text(&probe_params[3], &s, &err);
        rb_alloc_fail_after(-1);
        cr_assert(rc == RB_OK || rc == RB_ENOMEM);
        cr_expect(rc == RB_OK ? s != NULL : s == NULL);
        rb_free(s);
    }
    rb_registry_free(reg);
}

Test(stage_doc, registry_refuses_another_version)
{
    rb_registry *reg = NULL;
    rb_err err;
    cr_assert_eq(rb_registry_new(&reg, &err), RB_OK);
    const int versions[] = {0, RB_STAGE_TYPE_VERSION - 1, RB_STAGE_TYPE_VERSION + 1, -1};
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
        rb_stage_type other = probe_type;
        other.version = versions[i];
        cr_assert_eq(rb_registry_add(reg, &other, &err), RB_EINVAL, "version %d", versions[i]);
        char want[128];
        snprintf(want, sizeof want, "stage type probe: version %d, this library takes version %d", versions[i],
                 RB_STAGE_TYPE_VERSION);
        cr_expect_str_eq(err.msg, want);
    }
    cr_expect_eq(rb_registry_count(reg), 0, "nothing registered");
    cr_expect_null(rb_registry_find(reg, "probe"));
    cr_assert_eq(rb_registry_add(reg, &probe_type, &err), RB_OK, "%s", err.msg);
    rb_registry_free(reg);
}

static bool filled(const char *s) { return s && s[0]; }

Test(stage_doc, every_builtin_type_is_documented)
{
    rb_registry *reg = NULL;
    rb_err err;
    cr_assert_eq(rb_registry_new(&reg, &err), RB_OK);
    cr_assert_eq(rb_estimators_register(reg, &err), RB_OK, "%s", err.msg);
    cr_assert_geq(rb_registry_count(reg), 9);
    for (size_t i = 0; i < rb_registry_count(reg); i++) {
        const rb_stage_type *t = rb_registry_at(reg, i);
        cr_expect(filled(t->summary), "%s: summary", t->name);
        cr_expect(filled(t->doc) && t->doc[strlen(t->doc) - 1] == '\n', "%s: doc, ending in a newline", t->name);
        cr_expect(t->input_docs && t->output_docs, "%s: port docs", t->name);
        for (size_t k = 0; t->input_docs && k < t->n_inputs; k++)
            cr_expect(filled(t->input_docs[k]), "%s: input %s", t->name, t->inputs[k]);
        for (size_t k = 0; t->output_docs && k < t->n_outputs; k++)
            cr_expect(filled(t->output_docs[k]), "%s: output %s", t->name, t->outputs[k]);
        for (size_t k = 0; k < t->n_params; k++)
            cr_expect(filled(t->params[k].doc), "%s: parameter %s", t->name, t->params[k].name);
    }
    rb_registry_free(reg);
}
