/*
 * fuzz_args.c - libFuzzer target for the Megatron-LM / NeMo arguments grammar (built with
 * -DSIMTRAIN_FUZZ=ON by clang; tests/fuzz/run.sh builds and runs it).
 *
 * Every input is written to a scratch file and imported as `simtrain import megatron` does
 * (src/import/megatron*.c): shell words, quotes, `\` continuations, comments, a torchrun
 * launcher, `--flag value`, `--flag=value`, NeMo `key=value`, then the translation and the
 * loader's check of the text it writes (import/verify.c), on the tiny-box fixture with 2 GPUs.
 * Diagnostics go to /dev/null. Any crash, leak, hang or undefined behaviour is a bug.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, mkstemp */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "import/import.h"

#include "fuzz_scratch.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char scratch[] = "/tmp/simtrain-fuzz-args-XXXXXX";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_scratch_init(scratch);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *files[1] = { scratch };
    struct import_request rq = {
        .kind = IMPORT_MEGATRON, .files = files, .nfiles = 1, .hardware = "tiny-box", .gpus = 2
    };
    size_t len = 0;
    FILE *f = fopen(scratch, "w");

    if (!f)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    free(import_scenario(&rq, devnull, &len));
    return 0;
}
