/*
 * test_serve.c - `simtrain serve`'s API (serve/api.h) called directly: the documents equal
 * the command line's --json byte for byte, bad YAML comes back as 4xx with its line:col, a
 * posted file path is refused without reading the file, the bounds on a request's work hold,
 * nothing is kept between requests. The HTTP layer (serve/serve.h) is in test_serve_http.c.
 */
#define _POSIX_C_SOURCE 200809L /* popen, mkdtemp, symlink */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "serve/api.h"

#ifndef SIMTRAIN_BINARY
#define SIMTRAIN_BINARY "build/simtrain"
#endif

struct reply {
    int status;
    char *body;
};

/* POST (or GET when text is NULL and method says so) one request through api_handle(). */
static struct reply call(const char *method, const char *path, const char *text, size_t len,
                         const struct api_param *params, int nparams, const struct api_limits *lim)
{
    struct api_limits def;
    struct api_request rq = { method, path, params, nparams, text, len };
    struct api_reply out;
    struct reply r;

    api_limits_default(&def);
    api_handle(&rq, lim ? lim : &def, &out);
    r.status = out.status;
    r.body = xmalloc(out.len + 1);
    memcpy(r.body, out.body, out.len);
    r.body[out.len] = '\0';
    assert_int_equal(strlen(r.body), out.len); /* JSON and HTML: no NUL inside */
    api_reply_release(&out);
    return r;
}

static struct reply post(const char *path, const char *text, const struct api_param *params,
                         int nparams)
{
    return call("POST", path, text, strlen(text), params, nparams, NULL);
}

static char *slurp(const char *path)
{
    char *t = read_file(path, NULL);

    if (!t)
        fail_msg("cannot read %s", path);
    return t;
}

/* The standard output of a shell command (heap). */
static char *run_cmd(const char *cmd)
{
    FILE *p = popen(cmd, "r");
    struct strbuf sb;
    char buf[65536];
    size_t n;

    assert_non_null(p);
    sb_init(&sb);
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
        sb_add(&sb, buf, n);
    pclose(p);
    return sb_detach(&sb);
}

/* /api/run of a shipped scenario equals `simtrain SCENARIO --json -`, byte for byte. */
static void test_api_run_equals_cli(void **state)
{
    static const char *const names[] = { "70b_256gpu",       "gpt2_1gpu",
                                         "finetune_7b_1gpu", "mixtral_8x7b_64gpu",
                                         "qlora_7b_4090",    "sharding_offload_13b_1gpu" };
    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        char *path = xasprintf("scenarios/%s.yaml", names[i]), *text = slurp(path);
        char *cmd = xasprintf("%s %s --json - -q 2>/dev/null", SIMTRAIN_BINARY, path);
        char *want = run_cmd(cmd);
        struct reply r = post("/api/run", text, NULL, 0);

        assert_int_equal(r.status, 200);
        if (strcmp(r.body, want) != 0)
            fail_msg("%s: /api/run differs from --json", names[i]);
        free(r.body);
        free(want);
        free(cmd);
        free(text);
        free(path);
    }
}

/* Query parameters are --set overrides: /api/run?parallelism.tp=4&... equals --set. */
static void test_api_overrides_equal_set(void **state)
{
    char *text = slurp("scenarios/70b_256gpu.yaml");
    const struct api_param p[] = { { "parallelism.tp", "4" },
                                   { "parallelism.dp", "16" },
                                   { "training.micro_batch", "2" } };
    char *want =
        run_cmd(SIMTRAIN_BINARY " scenarios/70b_256gpu.yaml --set parallelism.tp=4 --set "
                                "parallelism.dp=16 --set training.micro_batch=2 --json - -q");
    struct reply r = post("/api/run", text, p, 3);

    (void)state;
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, want);
    free(r.body);
    free(want);
    free(text);
}

/* Nothing is kept between requests: the scenario without overrides after one with them. */
static void test_api_no_state_between_requests(void **state)
{
    char *text = slurp("scenarios/ddp_8gpu.yaml");
    const struct api_param p[] = { { "training.micro_batch", "1" } };
    struct reply a = post("/api/run", text, NULL, 0), b = post("/api/run", text, p, 1),
                 c = post("/api/run", text, NULL, 0);

    (void)state;
    assert_int_equal(a.status, 200);
    assert_int_equal(b.status, 200);
    assert_string_equal(a.body, c.body);
    assert_string_not_equal(a.body, b.body);
    free(a.body);
    free(b.body);
    free(c.body);
    free(text);
}

/* /api/memory and /api/plan: the documents of `memory` and `plan` --json on scenario.yaml. */
static void test_api_memory_plan_equal_cli(void **state)
{
    char dir[] = "/tmp/simtrain-serve-XXXXXX", *text = slurp("scenarios/sharding_7b_8gpu.yaml");
    char *file, *cmd, *want;
    const struct api_param top[] = { { "top", "3" } };
    struct reply r;
    FILE *f;

    (void)state;
    assert_non_null(mkdtemp(dir));
    file = xasprintf("%s/scenario.yaml", dir);
    f = fopen(file, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    cmd = xasprintf("cd %s && %s memory scenario.yaml --json - 2>/dev/null", dir, SIMTRAIN_BINARY);
    want = run_cmd(cmd);
    r = post("/api/memory", text, NULL, 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, want);
    free(r.body);
    free(want);
    free(cmd);
    /* the plan's search_s and simulate_s are wall-clock times: compare without those lines */
    cmd = xasprintf("cd %s && %s plan scenario.yaml --top 3 --json - 2>/dev/null | grep -v '_s\":'",
                    dir, SIMTRAIN_BINARY);
    want = run_cmd(cmd);
    r = post("/api/plan", text, top, 1);
    assert_int_equal(r.status, 200);
    {
        struct strbuf sb;
        char *line = r.body;
        sb_init(&sb);
        while (*line) {
            size_t n = strcspn(line, "\n") + (line[strcspn(line, "\n")] == '\n');
            char *eol = memchr(line, '\n', n);
            if (!strstr(line, "_s\":") || (eol && strstr(line, "_s\":") > eol))
                sb_add(&sb, line, n);
            line += n;
        }
        assert_string_equal(sb.buf, want);
        sb_release(&sb);
    }
    free(r.body);
    free(want);
    free(cmd);
    unlink(file);
    rmdir(dir);
    free(file);
    free(text);
}

/* Malformed YAML: 400, the CLI's message, and its line and column in the posted text. */
static void test_api_malformed_yaml(void **state)
{
    struct reply r = post("/api/run",
                          "hardware: dgx-h100\nworkload: llama3-70b\ntraining:\n  seq_len: 4096\n"
                          "  global_batch: [1\n",
                          NULL, 0);

    (void)state;
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "\"error\":\"scenario.yaml:6:1: error: invalid YAML"));
    assert_non_null(strstr(r.body, "\"line\":6,\"column\":1"));
    free(r.body);
    r = post("/api/run", "hardware: dgx-h100\nworkload: llama3-70b\ntraining:\n  seq_lenn: 4096\n",
             NULL, 0);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "\"line\":4,\"column\":3"));
    assert_non_null(strstr(r.body, "unknown key 'seq_lenn'"));
    free(r.body);
}

/* A posted file path, of any kind, is refused (4xx) and no byte of the file comes back. */
static void test_api_file_paths_refused(void **state)
{
    static const char *const refs[] = {
        "hardware: /etc/passwd",
        "hardware: ../../../../etc/passwd",
        "hardware: hardware/dgx-h100.yaml",
        "hardware: ./dgx-h100.yaml",
        "hardware: dgx-h100.yaml",
        "hardware: /proc/self/environ",
        "hardware: ..",
        "hardware: LINK",
        "hardware: {calibration: /etc/passwd}",
    };
    char dir[] = "/tmp/simtrain-serve-XXXXXX", *link;

    (void)state;
    assert_non_null(mkdtemp(dir));
    link = xasprintf("%s/passwd.yaml", dir);
    assert_int_equal(symlink("/etc/passwd", link), 0);
    for (size_t i = 0; i < ARRAY_LEN(refs); i++) {
        char *ref = strcmp(refs[i], "hardware: LINK") == 0 ? xasprintf("hardware: %s", link)
                                                           : xstrdup(refs[i]);
        char *text = xasprintf("%s\nworkload: llama3-8b\ntraining: {seq_len: 4096, global_batch: "
                               "8}\n",
                               ref);
        struct reply r = post("/api/run", text, NULL, 0);

        if (r.status < 400 || r.status >= 500)
            fail_msg("'%s': status %d", ref, r.status);
        if (strstr(r.body, "root:") || strstr(r.body, "PATH=") ||
            strstr(r.body, SIMTRAIN_SOURCE_DIR "/"))
            fail_msg("'%s': the reply shows a file of the server: %s", ref, r.body);
        assert_non_null(strstr(r.body, "\"line\":1"));
        free(r.body);
        free(text);
        free(ref);
    }
    {
        const struct api_param p[] = { { "hardware", "/etc/passwd" } };
        struct reply r = post("/api/run",
                              "hardware: dgx-h100\nworkload: llama3-8b\n"
                              "training: {seq_len: 4096, global_batch: 8}\n",
                              p, 1);
        assert_int_equal(r.status, 400);
        assert_null(strstr(r.body, "root:"));
        assert_non_null(strstr(r.body, "not a name of the library"));
        free(r.body);
    }
    unlink(link);
    rmdir(dir);
    free(link);
}

/* The bounds: body, parameters, GPUs, engine work, plan layouts; each a 4xx with why. */
static void test_api_bounds(void **state)
{
    char *text = slurp("scenarios/70b_256gpu.yaml");
    struct api_limits lim;
    struct api_param many[70];
    const struct api_param huge[] = { { "cluster.nodes", "16384" },
                                      { "training.global_batch", "16384" },
                                      { "parallelism.dp", "4096" } };
    struct reply r;

    (void)state;
    api_limits_default(&lim);
    lim.max_body_bytes = 100;
    r = call("POST", "/api/run", text, strlen(text), NULL, 0, &lim);
    assert_int_equal(r.status, 413);
    free(r.body);
    api_limits_default(&lim);
    for (int i = 0; i < 70; i++)
        many[i] = (struct api_param){ "training.micro_batch", "1" };
    r = call("POST", "/api/run", text, strlen(text), many, 70, &lim);
    assert_int_equal(r.status, 422);
    free(r.body);
    r = call("POST", "/api/run", text, strlen(text), huge, 3, &lim);
    assert_int_equal(r.status, 422);
    assert_non_null(strstr(r.body, "131072 GPUs is more than the 65536"));
    free(r.body);
    lim.max_task_runs = 1000;
    r = call("POST", "/api/run", text, strlen(text), NULL, 0, &lim);
    assert_int_equal(r.status, 422);
    assert_non_null(strstr(r.body, "more than the 1e+03 this server simulates per request"));
    free(r.body);
    /* the memory limits' bisection takes many engine runs: the budget stops it */
    api_limits_default(&lim);
    lim.max_task_runs = 2.5e6;
    r = call("POST", "/api/memory", text, strlen(text), NULL, 0, &lim);
    assert_int_equal(r.status, 422);
    assert_non_null(strstr(r.body, "needs more simulation than"));
    free(r.body);
    /* no step starts past the deadline (here: at once) */
    api_limits_default(&lim);
    lim.max_seconds = 1e-9;
    r = call("POST", "/api/memory", text, strlen(text), NULL, 0, &lim);
    assert_int_equal(r.status, 422);
    assert_non_null(strstr(r.body, "steps started within 1e-09 s"));
    free(r.body);
    api_limits_default(&lim);
    lim.max_plan_layouts = 1000;
    r = call("POST", "/api/plan", text, strlen(text), NULL, 0, &lim);
    assert_int_equal(r.status, 422);
    assert_non_null(strstr(r.body, "more than 1000 layouts"));
    free(r.body);
    free(text);
}

/* Hostile bodies: NULs, bytes that are not UTF-8, deep nesting, an empty body: 400, no crash. */
static void test_api_hostile_bodies(void **state)
{
    static const char nul[] = "hardware: dgx-h100\0/etc/passwd\nworkload: x\n";
    static const char bad_utf8[] = "hardware: \xff\xfe\xc3\nworkload: llama3-8b\n";
    struct strbuf deep;
    struct reply r;

    (void)state;
    r = call("POST", "/api/run", nul, sizeof(nul) - 1, NULL, 0, NULL);
    assert_int_equal(r.status, 400);
    free(r.body);
    r = call("POST", "/api/run", bad_utf8, sizeof(bad_utf8) - 1, NULL, 0, NULL);
    assert_int_equal(r.status, 400);
    free(r.body);
    r = call("POST", "/api/run", NULL, 0, NULL, 0, NULL);
    assert_int_equal(r.status, 400);
    free(r.body);
    sb_init(&deep);
    sb_puts(&deep, "hardware: ");
    for (int i = 0; i < 100000; i++)
        sb_puts(&deep, "[");
    r = call("POST", "/api/run", deep.buf, deep.len, NULL, 0, NULL);
    assert_int_equal(r.status, 400);
    free(r.body);
    sb_release(&deep);
    r = post("/api/run", "- a\n- b\n", NULL, 0);
    assert_int_equal(r.status, 400);
    free(r.body);
}

/* Routes: the page, the library, 404 and 405 as JSON. */
static void test_api_routes(void **state)
{
    struct reply r;

    (void)state;
    r = call("GET", "/", NULL, 0, NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "<!DOCTYPE html>"));
    assert_non_null(strstr(r.body, "step-time"));
    assert_null(strstr(r.body, "@@"));
    assert_null(strstr(r.body, "http://"));
    assert_null(strstr(r.body, "https://"));
    free(r.body);
    r = call("GET", "/api/library", NULL, 0, NULL, 0, NULL);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "\"flagship\":\"70b_256gpu\""));
    assert_non_null(strstr(r.body, "{\"name\":\"dgx-h100\",\"gpu\":\"H100 SXM5 80GB\""));
    assert_non_null(strstr(r.body, "\"name\":\"07-pipeline-bubbles\""));
    assert_non_null(strstr(r.body, "\"megatron\""));
    free(r.body);
    r = call("GET", "/etc/passwd", NULL, 0, NULL, 0, NULL);
    assert_int_equal(r.status, 404);
    assert_null(strstr(r.body, "root:"));
    free(r.body);
    r = call("GET", "/api/run", NULL, 0, NULL, 0, NULL);
    assert_int_equal(r.status, 405);
    free(r.body);
    r = call("POST", "/api/run", "x: 1\n", 5, (const struct api_param[]){ { "", "1" } }, 1, NULL);
    assert_int_equal(r.status, 400);
    free(r.body);
}

/* /api/view: the /api/run document and the timeline, whose spans count every traced task. */
static void test_api_view(void **state)
{
    char *text = slurp("scenarios/gpt2_1gpu.yaml");
    char *want = run_cmd(SIMTRAIN_BINARY " scenarios/gpt2_1gpu.yaml --json - -q");
    struct reply r = post("/api/view", text, NULL, 0);
    const char *tl;

    (void)state;
    assert_int_equal(r.status, 200);
    assert_memory_equal(r.body, "{\"run\":", 7);
    assert_memory_equal(r.body + 7, want, strlen(want));
    tl = r.body + 7 + strlen(want);
    assert_memory_equal(tl, ",\"timeline\":{\"step_us\":", 23);
    assert_non_null(strstr(tl, "\"streams\":[\"compute\""));
    assert_non_null(strstr(tl, "\"memory\":[\n["));
    free(r.body);
    free(want);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api_run_equals_cli),
        cmocka_unit_test(test_api_overrides_equal_set),
        cmocka_unit_test(test_api_no_state_between_requests),
        cmocka_unit_test(test_api_memory_plan_equal_cli),
        cmocka_unit_test(test_api_malformed_yaml),
        cmocka_unit_test(test_api_file_paths_refused),
        cmocka_unit_test(test_api_bounds),
        cmocka_unit_test(test_api_hostile_bodies),
        cmocka_unit_test(test_api_routes),
        cmocka_unit_test(test_api_view),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
