/*
 * fuzz_json.c - libFuzzer target for the JSON reader and the importers that read JSON (built
 * with -DSIMTRAIN_FUZZ=ON by clang; tests/fuzz/run.sh builds and runs it).
 *
 * Every input goes through jt_parse() (import/jsontree.h), and the tree it builds is walked;
 * an input that parses is also imported as a Hugging Face config.json (a workload) and as a
 * DeepSpeed config for a small fixed model (tests/corpus/hf, the tiny-box fixture hardware,
 * the batch from --set), through a scratch file as the importers read files. Diagnostics go
 * to /dev/null. Any crash, leak or undefined behaviour is a bug.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, mkstemp, fileno */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "import/import.h"
#include "import/jsontree.h"

#include "fuzz_scratch.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char scratch[] = "/tmp/simtrain-fuzz-json-XXXXXX";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_scratch_init(scratch);
    return 0;
}

/* Visit every node (the positions and lengths must hold). */
static size_t walk(const struct yt_node *n, int depth)
{
    size_t sum = 1;

    if (!n || depth > YT_MAX_DEPTH + 1)
        return 0;
    if (n->end < n->off || n->end > n->src->len)
        abort();
    if (n->kind == YT_SCALAR)
        return n->len + 1;
    for (size_t i = 0; i < n->count; i++)
        sum += n->kind == YT_MAP
                   ? walk(n->pairs[i].key, depth + 1) + walk(n->pairs[i].value, depth + 1)
                   : walk(n->items[i], depth + 1);
    return sum;
}

static void import_as(enum import_kind kind, const char *model)
{
    static const struct cfg_override sets[] = {
        { "training.seq_len", "512", "training.seq_len=512" },
        { "training.micro_batch", "1", "training.micro_batch=1" },
        { "training.global_batch", "8", "training.global_batch=8" },
        { "training.precision", "bf16", "training.precision=bf16" },
    };
    const char *files[1] = { scratch };
    struct import_request rq = { .kind = kind,
                                 .files = files,
                                 .nfiles = 1,
                                 .hardware = kind == IMPORT_HF_CONFIG ? NULL : "tiny-box",
                                 .gpus = kind == IMPORT_HF_CONFIG ? 0 : 2,
                                 .model_config = model,
                                 .sets = sets,
                                 .nsets = 4 };
    size_t len = 0;

    free(import_scenario(&rq, devnull, &len));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct arena a;
    struct yt_error err;
    struct yt_doc *doc;
    FILE *f;

    arena_init(&a);
    doc = jt_parse(&a, "fuzz.json", (const char *)data, size, &err);
    if (doc && doc->root && walk(doc->root, 0) == 0)
        abort();
    if (doc && doc->root && doc->root->kind == YT_MAP && (f = fopen(scratch, "w"))) {
        fwrite(data, 1, size, f);
        fclose(f);
        import_as(IMPORT_HF_CONFIG, NULL);
        import_as(IMPORT_DEEPSPEED, "tests/corpus/hf/mlc-preset--llama3_2_1b.config.json");
    }
    arena_release(&a);
    return 0;
}
