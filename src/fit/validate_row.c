/*
 * validate_row.c - one row of a runs file as a scenario (validate.h, "Row -> scenario"): the
 * columns of the runs format, each field read and checked into the scenario's model, training
 * and parallelism (the enumeration words are the scenario keys', config/schema.h), and the
 * row's framework profile, loaded once per framework and version of the table, for what the
 * row leaves empty. validate.c evaluates the rows and gathers the statistics.
 */
#include "base/csv.h"
#include "fit/validate_internal.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "config/profile.h"
#include "config/schema.h"

/* ---- columns ---------------------------------------------------------------- */

static const struct {
    const char *name;
    bool required;
} columns[C_COUNT] = {
    [C_ID] = { "id", true },
    [C_SOURCE] = { "source", false },
    [C_HARDWARE] = { "hardware", true },
    [C_NUM_GPUS] = { "num_gpus", true },
    [C_LAYERS] = { "layers", true },
    [C_HIDDEN] = { "hidden", true },
    [C_HEADS] = { "heads", true },
    [C_KV_HEADS] = { "kv_heads", false },
    [C_FFN_HIDDEN] = { "ffn_hidden", false },
    [C_VOCAB] = { "vocab", true },
    [C_FFN_ACT] = { "ffn_act", false },
    [C_MOE_EXPERTS] = { "moe_experts", false },
    [C_MOE_TOPK] = { "moe_topk", false },
    [C_SEQ_LEN] = { "seq_len", true },
    [C_GLOBAL_BATCH] = { "global_batch", true },
    [C_MICRO_BATCH] = { "micro_batch", false },
    [C_DP] = { "dp", false },
    [C_TP] = { "tp", false },
    [C_PP] = { "pp", false },
    [C_VPP] = { "vpp", false },
    [C_CP] = { "cp", false },
    [C_EP] = { "ep", false },
    [C_SHARDING] = { "sharding", false },
    [C_SEQUENCE_PARALLEL] = { "sequence_parallel", false },
    [C_RECOMPUTE] = { "recompute", false },
    [C_PRECISION] = { "precision", false },
    [C_ATTENTION] = { "attention", false },
    [C_FRAMEWORK] = { "framework", false },
    [C_FRAMEWORK_VERSION] = { "framework_version", false },
    [C_METRIC] = { "metric", true },
    [C_VALUE] = { "value", true },
    [C_NORM] = { "norm", false },
    [C_POSITION] = { "position", false },
    [C_BIAS] = { "bias", false },
    [C_DROPOUT] = { "dropout", false },
    [C_TIED] = { "tied_embeddings", false },
    /*
     * Memory-model columns (docs/memory.md, "Validation rows"): finetune
     * (full | lora | qlora), lora_rank, lora_targets (q+k+v+o+gate+up+down or
     * all), lora_double_quant and lora_paged_optimizer (0 | 1), offload (none |
     * optimizer | params), optimizer (adamw | adam8bit | sgd | adafactor | torchao_adamw8bit |
     * torchao_adamw4bit | torchao_adamwfp8), master_weights (0 | 1), grad_dtype (fp32 | bf16 |
     * fp16) and memory_overhead_gib (CUDA context and NCCL; 0 for a torch.cuda.max_memory_allocated
     * figure) and memory_fragmentation (the caching allocator's free share,
     * training.memory_fragmentation; 0 for an allocated-bytes figure). Empty = the scenario
     * default.
     */
    [C_FINETUNE] = { "finetune", false },
    [C_LORA_RANK] = { "lora_rank", false },
    [C_LORA_TARGETS] = { "lora_targets", false },
    [C_LORA_DOUBLE_QUANT] = { "lora_double_quant", false },
    [C_LORA_PAGED] = { "lora_paged_optimizer", false },
    [C_OFFLOAD] = { "offload", false },
    [C_OPTIMIZER] = { "optimizer", false },
    [C_MASTER_WEIGHTS] = { "master_weights", false },
    [C_GRAD_DTYPE] = { "grad_dtype", false },
    [C_OVERHEAD] = { "memory_overhead_gib", false },
    /*
     * Overrides a source states for its row where the row's framework profile would set
     * something else (docs/runs-format.md; the set column states any key): lora_dropout (the
     * adapter dropout probability, training.lora.dropout), ddp_impl (megatron | pytorch:
     * ddp.impl, Megatron's --DDP-impl per model in the SC'21 scripts), fsdp_reduce_dtype (fp32
     * | bf16 | fp16: fsdp.reduce_dtype, llm-foundry's mixed-precision mode per table row) and
     * model_code (megatron | hf | litgpt: training.model_code) and attention_impl (cuda |
     * triton | fa3 | cudnn: training.attention_impl, the kernel a benchmark script passed for
     * its row). Everything else a framework
     * decides comes from its profile (frameworks/, config/profile.h).
     */
    [C_LORA_DROPOUT] = { "lora_dropout", false },
    [C_DDP_IMPL] = { "ddp_impl", false },
    [C_FSDP_REDUCE_DTYPE] = { "fsdp_reduce_dtype", false },
    [C_MODEL_CODE] = { "model_code", false },
    [C_ATTENTION_IMPL] = { "attention_impl", false },
    [C_FRAGMENTATION] = { "memory_fragmentation", false },
    /* Settings no other column states, as `simtrain --set` takes them: KEY=VALUE;KEY=VALUE. */
    [C_SET] = { "set", false },
};

void validate_find_columns(const struct csv_table *t, int *col)
{
    for (int c = 0; c < C_COUNT; c++)
        col[c] = csv_column(t, columns[c].name);
}

int validate_check_header(const struct csv_table *t, const int *col, FILE *diag)
{
    int missing = 0;

    for (int c = 0; c < C_COUNT; c++)
        if (columns[c].required && col[c] < 0) {
            if (diag)
                fprintf(diag, "%s:1: error: missing required column '%s'\n", t->name,
                        columns[c].name);
            missing++;
        }
    return missing ? -1 : 0;
}

/* ---- one row's fields --------------------------------------------------------- */

struct rowctx {
    const struct csv_table *t;
    int row;
    int col[C_COUNT];
    char *reason;
    size_t reason_len;
};

static int bad(struct rowctx *rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int bad(struct rowctx *rc, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(rc->reason, rc->reason_len, fmt, ap);
    va_end(ap);
    return -1;
}

static const char *field(const struct rowctx *rc, enum col c)
{
    return csv_field(rc->t, rc->row, rc->col[c]);
}

/*
 * The largest integer a column takes: 2^30, the YAML loader's bound (config/schema_internal.h), so
 * that products of a few of them stay far inside 64 bits (4 * hidden for ffn_hidden did not
 * fit an int at INT_MAX).
 */
#define INT_COLUMN_MAX 1073741824.0

/* An integer in [min, 2^30]; empty gives `def`, or an error when the column is required. */
static int get_int(struct rowctx *rc, enum col c, int def, int min, int *out)
{
    const char *s = field(rc, c);
    const char *end;
    double v;

    if (!*s) {
        if (columns[c].required)
            return bad(rc, "missing value for required column '%s'", columns[c].name);
        *out = def;
        return 0;
    }
    errno = 0;
    v = csv_strtod(s, &end);
    if (end == s || *end || errno || v > floor(v) || v < min)
        return bad(rc, "%s '%s' is not an integer >= %d", columns[c].name, s, min);
    if (v > INT_COLUMN_MAX)
        return bad(rc, "%s '%s' is more than %.0f (2^30), the most any integer key takes",
                   columns[c].name, s, INT_COLUMN_MAX);
    *out = (int)v;
    return 0;
}

/*
 * The YAML words of scenario key `key` (config/schema_scenario.c), which the runs format shares:
 * one table spells each enumeration for both formats.
 */
static const struct enum_name *key_words(const char *key)
{
    size_t off, at, len;
    char msg[160];
    const struct field *f = schema_lookup(key, &off, &at, &len, msg, sizeof(msg));

    assert(f && f->names);
    return f->names;
}

/* An enumeration word of scenario key `key`; empty gives `def`. */
static int get_enum(struct rowctx *rc, enum col c, const char *key, int def, int *out)
{
    const char *s = field(rc, c);

    *out = def;
    if (!*s)
        return 0;
    for (const struct enum_name *n = key_words(key); n->name; n++)
        if (!strcmp(s, n->name)) {
            *out = n->value;
            return 0;
        }
    return bad(rc, "unknown %s '%s'", columns[c].name, s);
}

static int get_bool(struct rowctx *rc, enum col c, bool def, bool *out)
{
    const char *s = field(rc, c);

    *out = def;
    if (!*s)
        return 0;
    if (!strcmp(s, "0") || !strcmp(s, "false"))
        *out = false;
    else if (!strcmp(s, "1") || !strcmp(s, "true"))
        *out = true;
    else
        return bad(rc, "%s '%s' is not 0 or 1", columns[c].name, s);
    return 0;
}

/* A number in [lo, hi] (`range` in words); empty leaves *out unchanged. */
static int get_number(struct rowctx *rc, enum col c, double lo, double hi, const char *range,
                      double *out)
{
    const char *s = field(rc, c);
    const char *end;
    double v;

    if (!*s)
        return 0;
    errno = 0;
    v = csv_strtod(s, &end);
    if (end == s || *end || errno || !(v >= lo && v <= hi))
        return bad(rc, "%s '%s' is not a number %s", columns[c].name, s, range);
    *out = v;
    return 0;
}

/* LoRA targets as `q+k+v+o+gate+up+down` (the YAML words), or `all` (empty: the scenario
 * default, q+v). */
static int get_targets(struct rowctx *rc, unsigned *out)
{
    const struct enum_name *words = key_words("training.lora.targets"), *n;
    const char *s = field(rc, C_LORA_TARGETS);

    if (!*s)
        return 0;
    *out = 0;
    if (!strcmp(s, "all")) {
        for (n = words; n->name; n++)
            *out |= (unsigned)n->value;
        return 0;
    }
    while (*s) {
        size_t len = strcspn(s, "+");
        for (n = words; n->name; n++)
            if (strlen(n->name) == len && !strncmp(s, n->name, len))
                break;
        if (!n->name)
            return bad(rc, "unknown lora target '%.*s' in '%s'", (int)len, s,
                       field(rc, C_LORA_TARGETS));
        if (*out & (unsigned)n->value)
            return bad(rc, "lora target '%s' is listed twice in '%s'", n->name,
                       field(rc, C_LORA_TARGETS));
        *out |= (unsigned)n->value;
        s += len + (s[len] == '+');
    }
    return 0;
}

/* The memory-model columns: fine-tuning mode, LoRA, optimizer, precision details, offload. */
static int fill_memory(struct rowctx *rc, struct training *tr)
{
    int ft, opt, off, grad, rank;
    double gib = NAN; /* memory_overhead_gib, when given */

    if (get_enum(rc, C_FINETUNE, "training.finetune", tr->finetune, &ft) ||
        get_int(rc, C_LORA_RANK, tr->lora.rank, 1, &rank) || get_targets(rc, &tr->lora.targets) ||
        get_bool(rc, C_LORA_DOUBLE_QUANT, tr->lora.double_quant, &tr->lora.double_quant) ||
        get_bool(rc, C_LORA_PAGED, tr->lora.paged_optimizer, &tr->lora.paged_optimizer) ||
        get_enum(rc, C_OFFLOAD, "training.offload", tr->offload, &off) ||
        get_enum(rc, C_OPTIMIZER, "training.optimizer", tr->optimizer, &opt) ||
        get_bool(rc, C_MASTER_WEIGHTS, tr->master_weights, &tr->master_weights) ||
        get_enum(rc, C_GRAD_DTYPE, "training.grad_dtype", tr->grad_dtype, &grad) ||
        get_number(rc, C_OVERHEAD, 0, 1048576, "between 0 and 1048576 (1 PiB)", &gib) ||
        get_number(rc, C_FRAGMENTATION, 0, 0.9, "between 0 and 0.9", &tr->fragmentation) ||
        get_number(rc, C_LORA_DROPOUT, 0, 1, "between 0 and 1", &tr->lora.dropout))
        return -1;
    if (!isnan(gib))
        tr->overhead_bytes = gib * 1024.0 * 1024.0 * 1024.0;
    tr->finetune = (enum finetune)ft;
    tr->lora.rank = rank;
    tr->lora.alpha = 2.0 * rank; /* the YAML default; alpha changes no cost */
    tr->offload = (enum offload)off;
    tr->optimizer = (enum optimizer_kind)opt;
    tr->grad_dtype = (enum dtype)grad;
    return 0;
}

/* Block style by MLP kind (see validate.h), then the optional override columns. */
static int fill_model(struct rowctx *rc, struct model *m, int seq_len)
{
    int act, norm, pos, experts, topk;
    bool gpt;

    memset(m, 0, sizeof(*m));
    m->name = field(rc, C_ID);
    if (get_int(rc, C_LAYERS, 0, 1, &m->layers) || get_int(rc, C_HIDDEN, 0, 1, &m->hidden) ||
        get_int(rc, C_HEADS, 0, 1, &m->heads) || get_int(rc, C_KV_HEADS, 0, 1, &m->kv_heads) ||
        get_int(rc, C_VOCAB, 0, 1, &m->vocab) ||
        get_enum(rc, C_FFN_ACT, "workload.activation", ACT_GELU, &act))
        return -1;
    m->act = (enum ffn_act)act;
    gpt = m->act == ACT_GELU;
    if (get_int(rc, C_FFN_HIDDEN, 4 * m->hidden, 1, &m->ffn_hidden) ||
        get_enum(rc, C_NORM, "workload.norm", gpt ? NORM_LAYERNORM : NORM_RMSNORM, &norm) ||
        get_enum(rc, C_POSITION, "workload.position", gpt ? POS_LEARNED : POS_ROPE, &pos) ||
        get_bool(rc, C_BIAS, gpt, &m->bias) || get_bool(rc, C_DROPOUT, gpt, &m->dropout) ||
        get_bool(rc, C_TIED, gpt, &m->tied_embeddings) ||
        get_int(rc, C_MOE_EXPERTS, 0, 0, &experts) || get_int(rc, C_MOE_TOPK, 0, 0, &topk))
        return -1;
    m->norm = (enum norm_kind)norm;
    m->pos = (enum pos_emb)pos;
    m->max_seq = seq_len;
    if (experts > 0) {
        if (topk < 1)
            return bad(rc, "moe_experts %d needs moe_topk >= 1", experts);
        m->moe.experts = experts;
        m->moe.topk = topk;
        m->moe.ffn_hidden = m->ffn_hidden;
        m->moe.layer_freq = 1;
    }
    return 0;
}

static int fill_training(struct rowctx *rc, struct scenario *s)
{
    struct training *tr = &s->train;
    int rec, attn, prec, code;

    if (get_int(rc, C_SEQ_LEN, 0, 1, &tr->seq_len) ||
        get_int(rc, C_GLOBAL_BATCH, 0, 1, &tr->global_batch) ||
        get_int(rc, C_MICRO_BATCH, 1, 1, &tr->micro_batch) ||
        get_enum(rc, C_RECOMPUTE, "training.recompute", RC_NONE, &rec) ||
        get_enum(rc, C_ATTENTION, "training.attention", ATTN_FLASH, &attn) ||
        get_enum(rc, C_MODEL_CODE, "training.model_code", CODE_AUTO, &code) ||
        get_enum(rc, C_PRECISION, "training.precision", DT_BF16, &prec))
        return -1;
    tr->recompute = (enum recompute)rec;
    tr->attention = (enum attn_kind)attn;
    tr->model_code = (enum model_code)code;
    tr->precision = (enum dtype)prec;
    if (*field(rc, C_ATTENTION_IMPL)) {
        int ai;
        if (get_enum(rc, C_ATTENTION_IMPL, "training.attention_impl", ATTN_IMPL_CUDA, &ai))
            return -1;
        tr->attention_impl = (enum attn_impl)ai;
    }
    return fill_memory(rc, tr);
}

static int fill_parallel(struct rowctx *rc, struct scenario *s)
{
    struct parallelism *p = &s->par;
    int sh, impl;

    if (get_int(rc, C_DP, 0, 1, &p->dp) || get_int(rc, C_TP, 1, 1, &p->tp) ||
        get_int(rc, C_PP, 1, 1, &p->pp) || get_int(rc, C_VPP, 1, 1, &p->vpp) ||
        get_int(rc, C_CP, 1, 1, &p->cp) || get_int(rc, C_EP, 1, 1, &p->ep) ||
        get_bool(rc, C_SEQUENCE_PARALLEL, false, &p->sequence_parallel) ||
        get_enum(rc, C_DDP_IMPL, "ddp.impl", DDP_IMPL_AUTO, &impl) ||
        get_enum(rc, C_SHARDING, "parallelism.sharding", SHARD_NONE, &sh))
        return -1;
    p->sharding = (enum sharding)sh;
    s->ddp.impl = (enum ddp_impl)impl;
    if (*field(rc, C_FSDP_REDUCE_DTYPE)) {
        int rd;
        if (get_enum(rc, C_FSDP_REDUCE_DTYPE, "fsdp.reduce_dtype", DT_FP32, &rd))
            return -1;
        s->fsdp.reduce_dtype = (enum dtype)rd;
    }
    return 0;
}

/* The scenario key each column sets: a non-empty one overrides the framework's profile. */
static const char *const column_key[C_COUNT] = {
    [C_NUM_GPUS] = "cluster.gpus",
    [C_LAYERS] = "workload.layers",
    [C_HIDDEN] = "workload.hidden",
    [C_HEADS] = "workload.heads",
    [C_VOCAB] = "workload.vocab",
    [C_FFN_ACT] = "workload.activation",
    [C_MOE_EXPERTS] = "workload.moe.experts",
    [C_MOE_TOPK] = "workload.moe.topk",
    [C_SEQ_LEN] = "training.seq_len",
    [C_GLOBAL_BATCH] = "training.global_batch",
    [C_KV_HEADS] = "workload.kv_heads",
    [C_FFN_HIDDEN] = "workload.ffn_hidden",
    [C_MICRO_BATCH] = "training.micro_batch",
    [C_DP] = "parallelism.dp",
    [C_TP] = "parallelism.tp",
    [C_PP] = "parallelism.pp",
    [C_VPP] = "parallelism.vpp",
    [C_CP] = "parallelism.cp",
    [C_EP] = "parallelism.ep",
    [C_SHARDING] = "parallelism.sharding",
    [C_SEQUENCE_PARALLEL] = "parallelism.sequence_parallel",
    [C_RECOMPUTE] = "training.recompute",
    [C_PRECISION] = "training.precision",
    [C_ATTENTION] = "training.attention",
    [C_NORM] = "workload.norm",
    [C_POSITION] = "workload.position",
    [C_BIAS] = "workload.bias",
    [C_DROPOUT] = "workload.dropout",
    [C_TIED] = "workload.tied_embeddings",
    [C_FINETUNE] = "training.finetune",
    [C_LORA_RANK] = "training.lora.rank",
    [C_LORA_TARGETS] = "training.lora.targets",
    [C_LORA_DOUBLE_QUANT] = "training.lora.double_quant",
    [C_LORA_PAGED] = "training.lora.paged_optimizer",
    [C_OFFLOAD] = "training.offload",
    [C_OPTIMIZER] = "training.optimizer",
    [C_MASTER_WEIGHTS] = "training.master_weights",
    [C_GRAD_DTYPE] = "training.grad_dtype",
    [C_OVERHEAD] = "training.memory_overhead",
    [C_LORA_DROPOUT] = "training.lora.dropout",
    [C_DDP_IMPL] = "ddp.impl",
    [C_FSDP_REDUCE_DTYPE] = "fsdp.reduce_dtype",
    [C_MODEL_CODE] = "training.model_code",
    [C_ATTENTION_IMPL] = "training.attention_impl",
    [C_FRAGMENTATION] = "training.memory_fragmentation",
};

/* The column that states `key` in this row (non-empty), or -1. */
static int key_column(const struct rowctx *rc, const char *key)
{
    for (int c = 0; c < C_COUNT; c++)
        if (column_key[c] && !strcmp(column_key[c], key) && *field(rc, (enum col)c))
            return c;
    return -1;
}

/* Does the row state `key` itself (a non-empty column that sets it)? */
static bool row_given(const char *key, const void *ctx)
{
    return key_column(ctx, key) >= 0;
}

/* ---- the set column ------------------------------------------------------------- */

#define SET_MAX 32 /* entries of one row's set column */

/*
 * The row's `set` column: KEY=VALUE entries separated by ';' (spaces around each part
 * ignored, empty entries skipped), each applied as `simtrain --set` applies it to a loaded
 * scenario (cfg_set_in: the schema's types, units and ranges; the profile's rules and the
 * derived defaults follow). A key twice, or a key a column of the row states, is an error.
 */
static int apply_set(struct rowctx *rc, struct scenario *s, struct arena *a)
{
    const char *p = field(rc, C_SET);
    char keys[SET_MAX][64];
    int n = 0;

    while (*p) {
        size_t len = strcspn(p, ";"), klen;
        const char *e = p, *end = p + len, *eq;
        char key[64], value[256];
        struct cfg_error err;

        p = *end ? end + 1 : end;
        while (e < end && (*e == ' ' || *e == '\t'))
            e++;
        while (end > e && (end[-1] == ' ' || end[-1] == '\t'))
            end--;
        if (e == end)
            continue;
        eq = memchr(e, '=', (size_t)(end - e));
        if (!eq)
            return bad(rc, "set '%.*s': expected KEY=VALUE", (int)(end - e), e);
        for (klen = (size_t)(eq - e); klen > 0 && (e[klen - 1] == ' ' || e[klen - 1] == '\t');)
            klen--;
        if (klen == 0 || klen >= sizeof(key) || (size_t)(end - eq - 1) >= sizeof(value))
            return bad(rc,
                       "set '%.*s': expected KEY=VALUE (a key of at most %zu characters, a "
                       "value of at most %zu)",
                       (int)(end - e), e, sizeof(key) - 1, sizeof(value) - 1);
        memcpy(key, e, klen);
        key[klen] = '\0';
        for (eq++; eq < end && (*eq == ' ' || *eq == '\t'); eq++)
            ;
        memcpy(value, eq, (size_t)(end - eq));
        value[end - eq] = '\0';
        for (int i = 0; i < n; i++)
            if (!strcmp(keys[i], key))
                return bad(rc, "set: key '%s' is given twice", key);
        if (n == SET_MAX)
            return bad(rc, "set: more than %d entries", SET_MAX);
        snprintf(keys[n++], sizeof(keys[0]), "%s", key);
        if (!strcmp(key, "training.framework") || !strcmp(key, "training.framework_version"))
            return bad(rc, "set: '%s' is the row's column '%s'", key, key + 9);
        if (key_column(rc, key) >= 0)
            return bad(rc, "set: key '%s' is also the row's column '%s'", key,
                       columns[key_column(rc, key)].name);
        if (cfg_set_in(s, a, key, value, &err))
            return bad(rc, "set '%s=%s': %s", key, value, err.msg);
    }
    return 0;
}

/* ---- framework profiles --------------------------------------------------------- */

struct profile_entry {
    char *name, *version; /* as the rows spell them */
    struct fw_state fw;   /* valid when ok */
    bool ok;
    char reason[512];
};

struct validate_profiles {
    struct arena arena; /* the profiles' strings and settings */
    struct profile_entry *e;
    int n;
};

struct validate_profiles *validate_profiles_new(void)
{
    struct validate_profiles *vp = xcalloc(1, sizeof(*vp));

    arena_init(&vp->arena);
    return vp;
}

void validate_profiles_free(struct validate_profiles *vp)
{
    if (!vp)
        return;
    for (int i = 0; i < vp->n; i++) {
        free(vp->e[i].name);
        free(vp->e[i].version);
    }
    free(vp->e);
    arena_release(&vp->arena);
    free(vp);
}

/* The row's framework profile, loaded once per (framework, framework_version) of the table. */
static int row_profile(struct rowctx *rc, struct validate_profiles *vp, struct fw_state *fw)
{
    const char *name = field(rc, C_FRAMEWORK), *version = field(rc, C_FRAMEWORK_VERSION);
    struct profile_entry *e = NULL;

    if (!*name && *version)
        return bad(rc, "framework_version '%s' needs a framework", version);
    if (!*name || !strcmp(name, "other")) {
        if (!*version) {
            profile_none(fw);
            return 0;
        }
        name = "other";
    }
    for (int i = 0; i < vp->n && !e; i++)
        if (!strcmp(vp->e[i].name, name) && !strcmp(vp->e[i].version, version))
            e = &vp->e[i];
    if (!e) {
        struct schema_ctx c = { .a = &vp->arena };
        struct diag_mark none = { NULL, 0, 0 };

        vp->e = xrealloc(vp->e, sizeof(*vp->e) * (size_t)(vp->n + 1));
        e = &vp->e[vp->n++];
        memset(e, 0, sizeof(*e));
        e->name = xstrdup(name);
        e->version = xstrdup(version);
        c.msg = e->reason;
        c.msglen = sizeof(e->reason);
        e->ok = profile_select(&c, name, version, none, none, &e->fw) == 0;
    }
    if (!e->ok)
        return bad(rc, "%s", e->reason);
    *fw = e->fw;
    return 0;
}

int validate_row_scenario(const struct csv_table *t, int row, const struct hardware *hw,
                          struct validate_profiles *vp, struct scenario *s, char *reason,
                          size_t reason_len)
{
    struct rowctx rc = { .t = t, .row = row, .reason = reason, .reason_len = reason_len };
    struct cfg_error err;
    int gpus, gpn = hw->gpus_per_node > 0 ? hw->gpus_per_node : 1;

    validate_find_columns(t, rc.col);
    scenario_defaults(s);
    s->name = field(&rc, C_ID);
    s->path = "";
    s->description = field(&rc, C_SOURCE);
    s->hw = *hw;
    if (get_int(&rc, C_NUM_GPUS, 0, 1, &gpus) || fill_training(&rc, s) ||
        fill_model(&rc, &s->model, s->train.seq_len) || fill_parallel(&rc, s) ||
        row_profile(&rc, vp, &s->fw))
        return -1;
    s->gpus = gpus;
    s->nodes = (gpus + gpn - 1) / gpn;
    s->given = *field(&rc, C_FSDP_REDUCE_DTYPE) ? GIVEN_REDUCE_DTYPE : 0;
    /* The row's framework profile for what the row leaves empty, then the loader's derived
     * defaults (framework-dependent overlap, FSDP dtypes). */
    profile_bind(s, row_given, &rc);
    profile_apply(s);
    if (apply_set(&rc, s, &vp->arena))
        return -1;
    cfg_read_words(s, s->given | s->fw.given);
    memset(&err, 0, sizeof(err));
    if (scenario_finalize(s, &err))
        return bad(&rc, "%s", err.msg[0] ? err.msg : "invalid configuration");
    return 0;
}
