/*
 * test_import.c - the importers (src/import/): parameter counts of every corpus config.json
 * through `import hf-config` against the counts of their modeling code (research for issue 16,
 * architectures.md), the JSON reader's positions and refusals, YAML 1.1 scalars as Axolotl
 * reads them, every written key carrying its source, the DeepSpeed path Axolotl follows, the
 * order of --strict's refusals and --set over the sources.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, chdir */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/util.h"
#include "config/config.h"
#include "config/schema.h"
#include "import/import.h"
#include "import/jsontree.h"
#include "model/workload.h"

#define HF(name) SIMTRAIN_SOURCE_DIR "/tests/corpus/hf/" name ".config.json"

/* The text of an import of `kind` (NULL when refused); diagnostics into *diag (heap). */
static char *import(enum import_kind kind, const char *file, const char *hw, int gpus,
                    const char *model, bool strict, char **diag)
{
    const char *files[1] = { file };
    struct import_request rq = { .kind = kind,
                                 .files = files,
                                 .nfiles = 1,
                                 .hardware = hw,
                                 .gpus = gpus,
                                 .model_config = model,
                                 .strict = strict };
    size_t len = 0, dlen = 0;
    FILE *d = open_memstream(diag, &dlen);
    char *text;

    assert_non_null(d);
    text = import_scenario(&rq, d, &len);
    fclose(d);
    return text;
}

/* Every importable corpus architecture counts exactly the parameters of its modeling code. */
static void test_import_hf_param_counts(void **state)
{
    static const struct {
        const char *file;
        double total, active;
    } cases[] = {
        { "meta-llama--Meta-Llama-3.1-8B", 8030261248.0, 0 },
        { "meta-llama--Meta-Llama-3.1-70B", 70553706496.0, 0 },
        { "meta-llama--Meta-Llama-3.1-405B", 405853388800.0, 0 },
        { "mlc-preset--llama2_7b", 6738415616.0, 0 },
        { "mlc-preset--llama2_70b", 68976648192.0, 0 },
        { "mlc-preset--llama3_2_1b", 1235814400.0, 0 },
        { "mlc-preset--tinyllama_1b_chat_v1.0", 1100048384.0, 0 },
        { "mistralai--Mixtral-8x7B-v0.1", 46702792704.0, 12879925248.0 },
        { "mlc-preset--mistral_7b", 7241732096.0, 0 },
        { "mlc-preset--mistral_7b_v03", 7248023552.0, 0 },
        { "mlc-preset--qwen2_0_5b", 494032768.0, 0 },
        { "Qwen--Qwen3-0.6B", 596049920.0, 0 },
        { "Qwen--Qwen3-8B", 8190735360.0, 0 },
        { "Qwen--Qwen3-30B-A3B", 30532122624.0, 3353032704.0 },
        { "mlc-preset--gemma_2b", 2506172416.0, 0 },
        { "mlc-preset--gpt2", 124439808.0, 0 },
        { "mlc-preset--gpt2_medium", 354823168.0, 0 },
        { "mlc-preset--redpajama_3b_v1", 2775864320.0, 0 },
        { "openai--gpt-oss-20b", 20914757184.0, 4187440704.0 },
    };
    char path[512], *diag = NULL;

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct model *m;
        char *text;
        snprintf(path, sizeof(path), HF("%s"), cases[i].file);
        text = import(IMPORT_HF_CONFIG, path, NULL, 0, NULL, false, &diag);
        if (!text)
            fail_msg("%s: %s", cases[i].file, diag);
        m = cfg_load_model_mem(path, text, strlen(text), stderr);
        assert_non_null(m);
        if (workload_params_total(m) < cases[i].total - 0.5 ||
            workload_params_total(m) > cases[i].total + 0.5)
            fail_msg("%s: %.0f parameters, expected %.0f", cases[i].file, workload_params_total(m),
                     cases[i].total);
        if (cases[i].active > 0 && (workload_params_active(m) < cases[i].active - 0.5 ||
                                    workload_params_active(m) > cases[i].active + 0.5))
            fail_msg("%s: %.0f active, expected %.0f", cases[i].file, workload_params_active(m),
                     cases[i].active);
        cfg_free_model(m);
        free(text);
        free(diag);
        diag = NULL;
    }
}

/* The architectures the workload cannot express are refused at the key that asks for them. */
static void test_import_hf_refusals(void **state)
{
    char *diag = NULL;

    (void)state;
    assert_null(
        import(IMPORT_HF_CONFIG, HF("deepseek-ai--DeepSeek-V3"), NULL, 0, NULL, false, &diag));
    assert_non_null(strstr(diag, "DeepSeek-V3.config.json:20:3: error: multi-latent attention "
                                 "('kv_lora_rank'"));
    free(diag);
    assert_null(import(IMPORT_HF_CONFIG, HF("mlc-preset--phi-2"), NULL, 0, NULL, false, &diag));
    assert_non_null(strstr(diag, "phi-2.config.json:19:3: error: model_type 'phi-msft'"));
    free(diag);
}

static struct yt_doc *json(struct arena *a, const char *text, struct yt_error *err)
{
    return jt_parse(a, "t.json", text, strlen(text), err);
}

static void where(const struct yt_error *e, int *line, int *col)
{
    diag_locate(e->mark.src, e->mark.off, line, col);
}

/*
 * The JSON reader keeps every key's and value's byte range, decodes strings, keeps numbers
 * as written, and refuses what Python's json or DeepSpeed would (syntax at its line and
 * column, a repeated key with a note at the first, invalid UTF-8, control characters, too deep).
 */
static void test_import_json_reader(void **state)
{
    struct arena a;
    struct yt_error e;
    struct yt_doc *d;
    const struct yt_node *v;
    int line, col;
    char deep[200];

    (void)state;
    arena_init(&a);
    d = json(&a, "{\n  \"hidden_size\": 4096,\n  \"name\": \"a\\u00e9b\",\n  \"x\": [1, 2e8]\n}",
             &e);
    assert_non_null(d);
    assert_int_equal(d->root->kind, YT_MAP);
    assert_int_equal(d->root->count, 3);
    v = yt_map_get(d->root, "hidden_size");
    assert_string_equal(v->text, "4096");
    assert_int_equal(v->style, YT_PLAIN);
    diag_locate(v->src, v->off, &line, &col);
    assert_int_equal(line, 2);
    assert_int_equal(col, 18);
    diag_locate(v->src, d->root->pairs[1].key->off, &line, &col);
    assert_int_equal(line, 3);
    assert_int_equal(col, 3);
    assert_string_equal(yt_map_get(d->root, "name")->text, "a\xc3\xa9"
                                                           "b");
    assert_int_equal(yt_map_get(d->root, "name")->style, YT_QUOTED);
    assert_string_equal(yt_map_get(d->root, "x")->items[1]->text, "2e8");

    assert_null(json(&a, "{\n  \"a\": 1,\n  \"b\": tru\n}", &e));
    where(&e, &line, &col);
    assert_int_equal(line, 3);
    assert_int_equal(col, 8);
    assert_string_equal(e.msg, "invalid JSON: unexpected 't'");
    assert_null(json(&a, "{\n  \"a\": 1,\n}\n", &e));
    assert_string_equal(e.msg, "invalid JSON: a trailing ',' before '}'");
    assert_null(json(&a, "{\"a\": 1", &e));
    assert_string_equal(e.msg, "invalid JSON: unexpected end of the text");
    assert_null(json(&a, "{\"a\": 1,\n \"a\": 2}", &e));
    assert_string_equal(e.msg, "duplicate key 'a' (first defined at line 1)");
    assert_non_null(e.note_mark.src);
    assert_null(json(&a, "{\"a\": \"\xff\"}", &e));
    assert_string_equal(e.msg, "invalid UTF-8 (byte 0xFF)");
    assert_null(json(&a, "{\"a\": 1}\x01", &e));
    assert_string_equal(e.msg, "control character 0x01 in JSON text");
    memset(deep, '[', 40);
    memset(deep + 40, ']', 40);
    deep[80] = '\0';
    assert_null(json(&a, deep, &e));
    assert_string_equal(e.msg, "nesting deeper than 32 levels");
    assert_non_null(json(&a, "\xEF\xBB\xBF{\"a\": null}", &e));
    arena_release(&a);
}

/* A scratch folder with `name` holding `text`; returns the file's path (heap). */
static char *scratch(char *dir, const char *name, const char *text)
{
    char *path = xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static const char *const axolotl_yaml = "base_model: org/model\n"
                                        "sequence_len: 8_192\n"
                                        "micro_batch_size: 2\n"
                                        "gradient_accumulation_steps: 3\n"
                                        "bf16: True\n"
                                        "adapter: lora\n"
                                        "lora_r: 8\n"
                                        "lora_target_modules: [q_proj, v_proj]\n"
                                        "optimizer: paged_adamw_8bit\n"
                                        "gradient_checkpointing: yes\n"
                                        "deepspeed: ds.json\n"
                                        "wandb_project:\n"
                                        "some_new_key:\n";

static const char *const ds_json = "{\"zero_optimization\": {\"stage\": 2},\n"
                                   " \"bf16\": {\"enabled\": \"auto\"},\n"
                                   " \"train_micro_batch_size_per_gpu\": \"auto\"}\n";

/* Every key line of an imported text carries a comment; comment lines are all "# ..." */
static void every_key_commented(const char *text)
{
    const char *l = text;

    while (*l) {
        const char *nl = strchr(l, '\n'), *end = nl ? nl : l + strlen(l);
        const char *p = l;
        while (p < end && *p == ' ')
            p++;
        if (p < end && *p != '#' && memchr(p, ':', (size_t)(end - p))) {
            const char *colon = memchr(p, ':', (size_t)(end - p));
            bool section = colon + 1 == end; /* "training:" opens a section */
            char line[1024];
            snprintf(line, sizeof(line), "%.*s", (int)(end - p), p);
            if (!section && !strstr(line, "  # "))
                fail_msg("a key without its source: %s", line);
        }
        l = nl ? nl + 1 : end;
    }
}

/*
 * Axolotl's YAML 1.1 (8_192 an integer, True and yes booleans, a bare key null); the batch
 * per GPU times accumulation times dp; every key names its source; `deepspeed:` is followed
 * from the working directory first, as Axolotl opens it, else beside the YAML, and the note
 * says which; neither is an error listing both.
 */
static void test_import_axolotl_yaml_and_deepspeed_path(void **state)
{
    char dir[] = "/tmp/simtrain-import-XXXXXX", cwd[4096], *yml, *ds, *text, *diag = NULL;

    (void)state;
    assert_non_null(mkdtemp(dir));
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    yml = scratch(dir, "x.yml", axolotl_yaml);
    ds = scratch(dir, "ds.json", ds_json);
    text = import(IMPORT_AXOLOTL, yml, "dgx-h100", 2, HF("meta-llama--Meta-Llama-3.1-8B"), false,
                  &diag);
    if (!text)
        fail_msg("%s", diag);
    assert_non_null(strstr(text, "  seq_len: 8192 "));
    assert_non_null(strstr(text, "  micro_batch: 2 "));
    assert_non_null(strstr(text, "  global_batch: 12 "));
    assert_non_null(strstr(text, "  precision: bf16 "));
    assert_non_null(strstr(text, "  recompute: full "));
    assert_non_null(strstr(text, "  paged_optimizer: true "));
    assert_non_null(strstr(text, "    targets: [q, v] "));
    assert_non_null(strstr(text, "  sharding: zero2 "));
    assert_non_null(strstr(text, "x.yml:2 sequence_len"));
    assert_non_null(strstr(text, "wandb_project: logging"));
    assert_non_null(strstr(text, "some_new_key: null, as absent"));
    assert_non_null(strstr(text, "read beside the YAML; Axolotl itself opens it relative to the "
                                 "working directory only"));
    every_key_commented(text);
    free(text);
    free(diag);
    /* from the folder the YAML names it from: the working directory, Axolotl's own rule */
    assert_int_equal(chdir(dir), 0);
    text = import(IMPORT_AXOLOTL, "x.yml", "dgx-h100", 2, HF("meta-llama--Meta-Llama-3.1-8B"),
                  false, &diag);
    assert_int_equal(chdir(cwd), 0);
    assert_non_null(text);
    assert_non_null(strstr(text, "read relative to the working directory, as Axolotl opens it"));
    free(text);
    free(diag);
    remove(ds);
    assert_null(import(IMPORT_AXOLOTL, yml, "dgx-h100", 2, HF("meta-llama--Meta-Llama-3.1-8B"),
                       false, &diag));
    assert_non_null(strstr(diag, "x.yml:11:12: error: DeepSpeed config 'ds.json' not found: "
                                 "Axolotl opens it relative to the working directory"));
    assert_non_null(strstr(diag, "tried 'ds.json' (from the working directory) and"));
    free(diag);
    remove(yml);
    rmdir(dir);
    free(yml);
    free(ds);
}

/*
 * --strict refuses every key that affects memory or time but is not modelled or only
 * approximated, the first in file order first; without it they are listed, marked.
 */
static void test_import_strict_order(void **state)
{
    char dir[] = "/tmp/simtrain-import-XXXXXX", *yml, *text, *diag = NULL;

    (void)state;
    assert_non_null(mkdtemp(dir));
    yml = scratch(dir, "s.yml",
                  "base_model: org/model\n"
                  "torch_compile: true\n"
                  "tiled_mlp: true\n"
                  "sequence_len: 1024\n");
    text = import(IMPORT_AXOLOTL, yml, "dgx-h100", 1, HF("meta-llama--Meta-Llama-3.1-8B"), false,
                  &diag);
    assert_non_null(text);
    assert_non_null(strstr(text, "# * s.yml:2:1 ignored: torch_compile:"));
    free(text);
    free(diag);
    assert_null(import(IMPORT_AXOLOTL, yml, "dgx-h100", 1, HF("meta-llama--Meta-Llama-3.1-8B"),
                       true, &diag));
    assert_non_null(strstr(diag, "s.yml:2:1: error: not modelled, and it affects memory or step "
                                 "time (--strict): torch_compile"));
    assert_true(strstr(diag, "s.yml:2:1") < strstr(diag, "s.yml:3:1"));
    free(diag);
    remove(yml);
    rmdir(dir);
    free(yml);
}

/* Imports `optimizer: want[i][0]` for each i and checks the scenario line `key: want[i][1]`. */
static void check_optimizer_words(const char *const (*want)[2], size_t n, const char *key)
{
    char dir[] = "/tmp/simtrain-import-XXXXXX", *yml, *text, *diag = NULL, body[160], line[80];

    assert_non_null(mkdtemp(dir));
    for (size_t i = 0; i < n; i++) {
        snprintf(body, sizeof(body), "base_model: org/model\nsequence_len: 1024\noptimizer: %s\n",
                 want[i][0]);
        yml = scratch(dir, "o.yml", body);
        text = import(IMPORT_AXOLOTL, yml, "dgx-h100", 1, HF("meta-llama--Meta-Llama-3.1-8B"),
                      false, &diag);
        if (!text)
            fail_msg("%s", diag);
        snprintf(line, sizeof(line), "  %s: %s ", key, want[i][1]);
        assert_non_null(strstr(text, line));
        free(text);
        free(diag);
        diag = NULL;
        remove(yml);
        free(yml);
    }
    rmdir(dir);
}

/*
 * Axolotl unfrozen_parameters (utils/freeze.py freeze_layers_except): the regexes match the
 * transformers names of the imported model, Axolotl's way (a "." is literal, re.match anchors
 * at the start, a trailing [:n] range keeps the whole parameter trainable); Llama 3.1 8B with
 * its embedding, its head and the MLPs of layers 30-31: 2 x 128256 x 4096 + 2 x 3 x 4096 x
 * 14336 of 8030261248 parameters train. A pattern that matches nothing is refused at its line.
 */
static void test_import_axolotl_unfrozen_parameters(void **state)
{
    char dir[] = "/tmp/simtrain-import-XXXXXX", *yml, *text, *diag = NULL;

    (void)state;
    assert_non_null(mkdtemp(dir));
    yml = scratch(dir, "u.yml",
                  "base_model: org/model\n"
                  "bf16: true\n"
                  "unfrozen_parameters:\n"
                  "  - ^lm_head.weight$\n"
                  "  - ^model.embed_tokens.weight$[:32000]\n"
                  "  - model.layers.3[0-1]+.mlp.*\n");
    text = import(IMPORT_AXOLOTL, yml, "dgx-h100", 1, HF("meta-llama--Meta-Llama-3.1-8B"), false,
                  &diag);
    if (!text)
        fail_msg("%s", diag);
    assert_non_null(strstr(text, "  trainable_fraction: 0.174713 "));
    assert_non_null(strstr(text, "1402994688 of 8030261248 parameters match"));
    assert_non_null(strstr(text, "  finetune: full "));
    free(text);
    free(diag);
    diag = NULL;
    free(yml);
    yml = scratch(dir, "u.yml",
                  "base_model: org/model\n"
                  "unfrozen_parameters:\n"
                  "  - ^lm_head.weight$\n"
                  "  - model.layers.4[0-9].mlp\n");
    assert_null(import(IMPORT_AXOLOTL, yml, "dgx-h100", 1, HF("meta-llama--Meta-Llama-3.1-8B"),
                       false, &diag));
    assert_non_null(strstr(diag, "u.yml:4:5: error: unfrozen_parameters: 'model.layers.4[0-9].mlp' "
                                 "matches no parameter of this llama model"));
    free(diag);
    diag = NULL;
    free(yml);
    yml = scratch(dir, "u.yml",
                  "base_model: org/model\n"
                  "adapter: lora\n"
                  "lora_target_linear: true\n"
                  "unfrozen_parameters: [^lm_head.weight$]\n");
    assert_null(import(IMPORT_AXOLOTL, yml, "dgx-h100", 1, HF("meta-llama--Meta-Llama-3.1-8B"),
                       false, &diag));
    assert_non_null(strstr(diag, "u.yml:4:1: error: unfrozen_parameters with an adapter"));
    free(diag);
    remove(yml);
    rmdir(dir);
    free(yml);
}

/* The optimizer's name says how transformers builds the AdamW step (training.optimizer_impl):
 * adamw_torch the foreach default, adamw_torch_fused fused, adamw_hf a loop per parameter. */
static void test_import_axolotl_optimizer_impl(void **state)
{
    static const char *const want[][2] = { { "adamw_torch", "foreach" },
                                           { "adamw_torch_fused", "fused" },
                                           { "adamw_hf", "for_loop" } };

    (void)state;
    check_optimizer_words(want, ARRAY_LEN(want), "optimizer_impl");
}

/* torchao's low-bit AdamW under transformers' names (adamw_torch_4bit / _8bit) and Axolotl's
 * (ao_adamw_4bit / _8bit / _fp8, utils/schemas/enums.py) is simtrain's torchao optimizer. */
static void test_import_axolotl_torchao_optimizers(void **state)
{
    static const char *const want[][2] = { { "adamw_torch_4bit", "torchao_adamw4bit" },
                                           { "adamw_torch_8bit", "torchao_adamw8bit" },
                                           { "ao_adamw_4bit", "torchao_adamw4bit" },
                                           { "ao_adamw_8bit", "torchao_adamw8bit" },
                                           { "ao_adamw_fp8", "torchao_adamwfp8" } };

    (void)state;
    check_optimizer_words(want, ARRAY_LEN(want), "optimizer");
}

/* --set writes its value over the source's, naming both; a hardware key stays the loader's. */
static void test_import_set_over_sources(void **state)
{
    char dir[] = "/tmp/simtrain-import-XXXXXX", *yml, *text, *diag = NULL;
    struct cfg_override set[3] = { { "training.micro_batch", "4", "training.micro_batch=4" },
                                   { "training.global_batch", "4", "training.global_batch=4" },
                                   { "hardware.gpu.memory", "40 GB",
                                     "hardware.gpu.memory=40 GB" } };
    const char *files[1];
    struct import_request rq = { .kind = IMPORT_AXOLOTL,
                                 .nfiles = 1,
                                 .hardware = "dgx-h100",
                                 .gpus = 1,
                                 .model_config = HF("meta-llama--Meta-Llama-3.1-8B"),
                                 .sets = set,
                                 .nsets = 3 };
    size_t len, dlen;
    FILE *d;

    (void)state;
    assert_non_null(mkdtemp(dir));
    yml = scratch(dir, "s.yml", "base_model: org/model\nmicro_batch_size: 2\n");
    files[0] = yml;
    rq.files = files;
    d = open_memstream(&diag, &dlen);
    text = import_scenario(&rq, d, &len);
    fclose(d);
    assert_non_null(text);
    assert_non_null(strstr(text, "  micro_batch: 4 "));
    assert_non_null(strstr(text, "--set training.micro_batch=4 (the import said 2: s.yml:2 "
                                 "micro_batch_size"));
    assert_null(strstr(text, "40 GB"));
    free(text);
    free(diag);
    rq.to_file = true; /* `simtrain import` refuses the hardware key */
    d = open_memstream(&diag, &dlen);
    assert_null(import_scenario(&rq, d, &len));
    fclose(d);
    assert_non_null(strstr(diag, "--set hardware.gpu.memory: the import names its hardware"));
    free(diag);
    remove(yml);
    rmdir(dir);
    free(yml);
}

/*
 * A bare config.json with --hardware and --gpus is a scenario with stated defaults for the
 * training it does not give (docs/import.md, "A bare config.json"): sequences of 4096 tokens, or
 * of max_position_embeddings when shorter (GPT-2's 1024), one micro-batch per GPU; --set wins,
 * and the global batch follows a --set micro-batch. The scenario loads and runs.
 */
static void test_import_hf_bare_defaults(void **state)
{
    struct cfg_override set[2] = { { "training.micro_batch", "2", "training.micro_batch=2" },
                                   { "training.seq_len", "8192", "training.seq_len=8192" } };
    const char *files[1] = { HF("meta-llama--Meta-Llama-3.1-8B") };
    struct import_request rq = {
        .kind = IMPORT_HF_CONFIG, .files = files, .nfiles = 1, .hardware = "dgx-h100", .gpus = 8
    };
    char *text, *diag = NULL;
    struct scenario *s;
    size_t len, dlen;
    FILE *d;

    (void)state;
    text = import(IMPORT_HF_CONFIG, HF("meta-llama--Meta-Llama-3.1-8B"), "dgx-h100", 8, NULL, false,
                  &diag);
    assert_non_null(text);
    assert_non_null(strstr(text, "  seq_len: 4096 "));
    assert_non_null(strstr(text, "default for a bare config.json: 4096 tokens (docs/import.md)"));
    assert_non_null(strstr(text, "  global_batch: 8 "));
    assert_non_null(strstr(text, "default for a bare config.json: 8 GPUs x micro-batch 1"));
    assert_non_null(strstr(text, "# - note: training.seq_len 4096: a bare config.json gives no "
                                 "sequence length"));
    s = cfg_load_scenario_mem("bare.yaml", text, strlen(text), NULL, 0, stderr);
    assert_non_null(s);
    assert_int_equal(s->train.seq_len, 4096);
    assert_int_equal(s->train.global_batch, 8);
    cfg_free(s);
    free(text);
    free(diag);
    text = import(IMPORT_HF_CONFIG, HF("mlc-preset--gpt2"), "dgx-h100", 1, NULL, false, &diag);
    assert_non_null(text);
    assert_non_null(strstr(text, "  seq_len: 1024 "));
    assert_non_null(strstr(text, "1024 tokens = max_position_embeddings"));
    assert_non_null(strstr(text, "  global_batch: 1 "));
    free(text);
    free(diag);
    rq.sets = set;
    rq.nsets = 2;
    d = open_memstream(&diag, &dlen);
    text = import_scenario(&rq, d, &len);
    fclose(d);
    assert_non_null(text);
    assert_non_null(strstr(text, "  seq_len: 8192 "));
    assert_non_null(strstr(text, "  micro_batch: 2 "));
    assert_non_null(strstr(text, "  global_batch: 16 "));
    free(text);
    free(diag);
    rq.gpus = 0; /* --gpus stays required */
    rq.nsets = 0;
    d = open_memstream(&diag, &dlen);
    assert_null(import_scenario(&rq, d, &len));
    fclose(d);
    assert_non_null(strstr(diag, "does not say how many GPUs run it: pass --gpus"));
    free(diag);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_import_hf_param_counts),
        cmocka_unit_test(test_import_hf_refusals),
        cmocka_unit_test(test_import_json_reader),
        cmocka_unit_test(test_import_axolotl_yaml_and_deepspeed_path),
        cmocka_unit_test(test_import_strict_order),
        cmocka_unit_test(test_import_axolotl_unfrozen_parameters),
        cmocka_unit_test(test_import_axolotl_optimizer_impl),
        cmocka_unit_test(test_import_axolotl_torchao_optimizers),
        cmocka_unit_test(test_import_set_over_sources),
        cmocka_unit_test(test_import_hf_bare_defaults),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
