/* lib/config against hostile JSON: a \u0000 escape (cJSON decodes it to a NUL byte, which cuts the C string
 * short) is refused wherever it stands, with the file, line, column and the string's text; a literal
 * backslash followed by "u0000" is ordinary text and loads unchanged. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <string.h>

#include "roboest/config.h"
#include "roboest/estimators.h"
#include "roboest/pipeline.h"

typedef struct nul_case {
    const char *text, *needle1, *needle2;
} nul_case;

Test(config_hostile, nul_escapes_are_refused_with_their_place)
{
    static const nul_case cases[] = {
        {"{\n  \"a\\u0000b\": 1\n}", "cfg.json:2:3: ", "key \"a\\u0000b\""},
        {"{\"name\": \"x\\u0000\"}", "cfg.json:1:10: ", "string \"x\\u0000\""},
        {"{\"list\": [\"ok\", \"\\\\\", \"\\u0000\"]}", "cfg.json:1:23: ", "string \"\\u0000\""},
        {"{\"a\\\\\": {\"b\": \"c\\\\u0000\", \"d\\u0000e\": 0}}", "cfg.json:1:27: ", "key \"d\\u0000e\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cJSON *root = NULL;
        rb_err err;
        int rc = rb_cfg_parse_json("cfg.json", cases[i].text, strlen(cases[i].text), &root, &err);
        cr_expect_eq(rc, RB_ECONFIG, "case %zu: %d", i, rc);
        cr_expect_null(root, "case %zu", i);
        cr_expect(strstr(err.msg, cases[i].needle1) && strstr(err.msg, cases[i].needle2) && strstr(err.msg, "NUL"),
                  "case %zu: %s", i, err.msg);
        cJSON_Delete(root);
    }
}

/* Escaped backslashes before "u0000", and other \u escapes, are not NULs. */
Test(config_hostile, backslash_u0000_text_is_not_a_nul)
{
    const char *text = "{\"\\\\u0000\": \"\\\\\\\\u0000\", \"e\": \"\\u00e9\\u0001\"}";
    cJSON *root = NULL;
    rb_err err;
    cr_assert_eq(rb_cfg_parse_json("cfg.json", text, strlen(text), &root, &err), RB_OK, "%s", err.msg);
    cr_expect_str_eq(root->child->string, "\\u0000");
    cr_expect_str_eq(root->child->valuestring, "\\\\u0000");
    cr_expect_str_eq(root->child->next->valuestring, "\xc3\xa9\x01");
    cJSON_Delete(root);
}

/* Through a loader: a stage id cut at the NUL used to load as the part before it. */
Test(config_hostile, pipeline_with_a_nul_in_a_name_is_refused)
{
    rb_registry *reg = NULL;
    rb_err err;
    cr_assert_eq(rb_registry_new(&reg, &err), RB_OK);
    cr_assert_eq(rb_estimators_register(reg, &err), RB_OK);
    const char *text = "{\n"
                       "  \"clock\": {\"rate\": 100.0},\n"
                       "  \"signals\": {\"q\": {\"channel\": \"joints_state/positions\"}},\n"
                       "  \"stages\": [\n"
                       "    {\"id\": \"fd\\u0000x\", \"type\": \"finite_difference\", \"in\": {\"x\": \"q\"}, "
                       "\"out\": {\"dx\": \"qd\"}}\n"
                       "  ],\n"
                       "  \"outputs\": [{\"path\": \"qd.csv\", \"signals\": [\"qd\"]}]\n"
                       "}\n";
    rb_pipeline *p = NULL;
    int rc = rb_pipeline_load_text(text, strlen(text), "nul.json", "/tmp/nul.json", reg, &p, &err);
    cr_expect_eq(rc, RB_ECONFIG, "%d %s", rc, p ? "loaded" : err.msg);
    cr_expect(strstr(err.msg, "nul.json:5:") && strstr(err.msg, "fd\\u0000x"), "%s", err.msg);
    rb_pipeline_free(p);
    rb_registry_free(reg);
}
