/* input.c - a scenario file or an imported config as a command's scenario; see input.h. */
#include "cli/input.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/schema.h"
#include "import/import.h"

const char *cli_import_kind(int i)
{
    return import_kind_name((enum import_kind)i);
}

char *cli_input_text_name(const struct cli_list *pos)
{
    struct import_request rq = { .files = pos->items, .nfiles = pos->n };

    return import_text_name(&rq);
}

/* Import-only options without --from are a usage error. */
static const char *import_only_option(const struct cli_input *in)
{
    return in->hardware       ? "--hardware"
           : in->gpus         ? "--gpus"
           : in->model_config ? "--model-config"
           : in->strict       ? "--strict"
                              : NULL;
}

/* Was `key` given with --set? */
static bool set_has(const struct cli_overrides *set, const char *key)
{
    for (int i = 0; i < set->n; i++)
        if (strcmp(set->ovr[i].key, key) == 0)
            return true;
    return false;
}

/*
 * A bare config.json gives no training: say which of the stated defaults the run took
 * (import/rules.c imp_training_defaults; docs/import.md, "A bare config.json").
 */
static void note_bare_defaults(const struct scenario *s, const char *path,
                               const struct cli_overrides *set)
{
    bool seq = !set_has(set, "training.seq_len"), batch = !set_has(set, "training.global_batch");

    if (!seq && !batch)
        return;
    fprintf(stderr,
            "note: %s gives no training; simtrain's defaults for a bare config.json: ", path);
    if (seq)
        fprintf(stderr, "training.seq_len %d (4096, or max_position_embeddings when shorter)",
                s->train.seq_len);
    if (batch)
        fprintf(stderr, "%straining.global_batch %d (one micro-batch per GPU)", seq ? ", " : "",
                s->train.global_batch);
    fprintf(stderr, " (docs/import.md); --set them for others\n");
}

static struct scenario *load_imported(const struct cli_list *pos, const struct cli_input *in,
                                      const struct cli_overrides *set, char **text_out,
                                      size_t *len_out)
{
    struct import_request rq = { .kind = (enum import_kind)in->from,
                                 .files = pos->items,
                                 .nfiles = pos->n,
                                 .hardware = in->hardware,
                                 .gpus = in->gpus,
                                 .model_config = in->model_config,
                                 .strict = in->strict,
                                 .sets = set->ovr,
                                 .nsets = set->n };
    size_t len = 0;
    char *text = import_scenario(&rq, stderr, &len), *name;
    struct scenario *s = NULL;

    if (!text)
        return NULL;
    name = import_text_name(&rq);
    s = cfg_load_scenario_mem(name, text, len, set->ovr, set->n, stderr);
    if (!s)
        fprintf(stderr,
                "note: the scenario above was imported from %s; `simtrain import %s` "
                "writes it\n",
                pos->items[0], import_kind_name(rq.kind));
    else
        s->path = pos->items[0]; /* reports name the config, as they name a scenario file */
    if (s && rq.kind == IMPORT_HF_CONFIG)
        note_bare_defaults(s, pos->items[0], set);
    free(name);
    if (s && text_out) {
        *text_out = text;
        *len_out = len;
    } else {
        free(text);
    }
    return s;
}

struct scenario *cli_load_input(const struct cli_command *cmd, const struct cli_list *pos,
                                const struct cli_input *in, const struct cli_overrides *set,
                                int *status, char **text, size_t *len)
{
    const char *only = import_only_option(in);
    struct scenario *s;

    *status = 2;
    if (text)
        *text = NULL;
    if (pos->n == 0) {
        if (in->from >= 0)
            cli_usage_error(cmd, "--from %s: no file given",
                            import_kind_name((enum import_kind)in->from));
        else
            cli_usage_error(cmd, "no scenario given");
        return NULL;
    }
    if (in->from < 0 && only) {
        cli_usage_error(cmd, "%s needs --from KIND", only);
        return NULL;
    }
    if (in->from < 0 && pos->n > 1) {
        cli_usage_error(cmd, "more than one scenario ('%s' and '%s')", pos->items[0],
                        pos->items[1]);
        return NULL;
    }
    *status = 1;
    s = in->from < 0 ? cfg_load_scenario(pos->items[0], set->ovr, set->n, stderr)
                     : load_imported(pos, in, set, text, len);
    return s;
}
