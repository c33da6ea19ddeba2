/*
 * set.c - cfg_set(): one typed field of a loaded scenario by dotted key,
 * with the loader's checks, and the re-derivation of values that followed it.
 */
#include "config/config.h"

#include <string.h>

#include "config/profile.h"
#include "config/schema.h"

static bool is(const char *key, const char *name)
{
    return strcmp(key, name) == 0;
}

/* After cfg_set changed `key`, forget the values derived from it (unless the file gave them). */
static void rederive(struct scenario *s, const char *key, unsigned given)
{
    bool size = is(key, "cluster.nodes") || is(key, "cluster.gpus") ||
                is(key, "hardware.node.gpus") || is(key, "hardware.nodes");

    if (size && !is(key, "cluster.gpus") && !(given & GIVEN_GPUS))
        s->gpus = 0;
    if (size && !is(key, "cluster.nodes") && !(given & GIVEN_NODES))
        s->nodes = 0;
    if ((size || is(key, "parallelism.tp") || is(key, "parallelism.pp") ||
         is(key, "parallelism.cp")) &&
        !(given & GIVEN_DP))
        s->par.dp = 0;
    if (is(key, "parallelism.vpp") && !(given & GIVEN_SCHEDULE))
        s->par.schedule = SCHED_1F1B;
    if ((is(key, "workload.heads") || is(key, "workload.hidden")) && !(given & GIVEN_HEAD_DIM))
        s->model.head_dim = 0;
    if (is(key, "workload.heads") && !(given & GIVEN_KV_HEADS))
        s->model.kv_heads = 0;
    if (is(key, "workload.hidden") && !(given & GIVEN_FFN_HIDDEN))
        s->model.ffn_hidden = 0;
    if ((is(key, "workload.ffn_hidden") || is(key, "workload.hidden")) &&
        !(given & GIVEN_MOE_FFN_HIDDEN))
        s->model.moe.ffn_hidden = 0;
    /* The profile's rules follow the new value (torchtitan's reshard rule with pp), then the
       derived defaults. */
    profile_apply(s);
}

int cfg_set(struct scenario *s, const char *key, const char *value, struct cfg_error *err)
{
    return cfg_set_in(s, s->src ? &s->src->arena : NULL, key, value, err);
}

int cfg_set_in(struct scenario *s, struct arena *a, const char *key, const char *value,
               struct cfg_error *err)
{
    size_t base_off, bad_at, bad_len;
    const struct field *f;
    struct arena tmp;
    struct yt_error ye;
    struct yt_doc *doc;
    struct schema_ctx c = { .msg = err->msg, .msglen = sizeof(err->msg) };
    struct scenario copy;
    unsigned given = s->given;

    memset(err, 0, sizeof(*err));
    snprintf(err->path, sizeof(err->path), "%s", key);
    f = schema_lookup(key, &base_off, &bad_at, &bad_len, err->msg, sizeof(err->msg));
    if (!f)
        return -1;
    if (f->type == FT_REF || strncmp(key, "training.framework", 18) == 0) {
        snprintf(err->msg, sizeof(err->msg), "'%s' cannot be changed after loading%s", key,
                 f->type == FT_REF ? "" : ": make one scenario per framework");
        return -1;
    }
    arena_init(&tmp);
    doc = yt_parse(&tmp, "<value>", value, strlen(value), 0, &ye);
    if (!doc) {
        snprintf(err->msg, sizeof(err->msg), "%s", ye.msg);
        arena_release(&tmp);
        return -1;
    }
    /* Strings must outlive the temporary tree: they go to the caller's arena (the scenario's
     * own for a loaded one). Work on a copy so that a failure leaves *s unchanged. */
    c.a = a;
    copy = *s;
    schema_extract_value(&c, f, NULL,
                         doc->root ? doc->root : yt_new_scalar(&tmp, &doc->src, "", 0, 0, 0),
                         (char *)&copy + base_off);
    arena_release(&tmp);
    if (c.errors)
        return -1;
    /* The key just set counts as given: its own derived default must not overwrite it. */
    copy.given = given | f->given;
    profile_override(&copy, key);
    if (is(key, "parallelism.zero2_impl") && copy.par.zero2_read)
        copy.par.sharding = SHARD_ZERO2; /* the word as given, read anew below */
    if (is(key, "parallelism.sharding") || is(key, "parallelism.zero2_impl"))
        copy.par.zero2_read = false;
    rederive(&copy, key, copy.given);
    if (is(key, "parallelism.sharding") || is(key, "parallelism.zero2_impl"))
        cfg_read_words(&copy, copy.given | copy.fw.given);
    *s = copy;
    return 0;
}
