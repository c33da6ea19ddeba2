/* validate.c - runs file in, predictions and error statistics out; see validate.h. */
#include "fit/validate.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "config/profile.h"
#include "config/schema.h"
#include "fit/fit.h"

/* Copy a string into a fixed buffer, truncating. */
static void set_str(char *dst, size_t n, const char *src)
{
    size_t len = strlen(src);

    if (len >= n)
        len = n - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

/* ---- columns ---------------------------------------------------------------- */

enum col {
    C_ID,
    C_SOURCE,
    C_HARDWARE,
    C_NUM_GPUS,
    C_LAYERS,
    C_HIDDEN,
    C_HEADS,
    C_KV_HEADS,
    C_FFN_HIDDEN,
    C_VOCAB,
    C_FFN_ACT,
    C_MOE_EXPERTS,
    C_MOE_TOPK,
    C_SEQ_LEN,
    C_GLOBAL_BATCH,
    C_MICRO_BATCH,
    C_DP,
    C_TP,
    C_PP,
    C_VPP,
    C_CP,
    C_EP,
    C_SHARDING,
    C_SEQUENCE_PARALLEL,
    C_RECOMPUTE,
    C_PRECISION,
    C_ATTENTION,
    C_FRAMEWORK,
    C_FRAMEWORK_VERSION,
    C_METRIC,
    C_VALUE,
    C_NORM,
    C_POSITION,
    C_BIAS,
    C_DROPOUT,
    C_TIED,
    C_FINETUNE,
    C_LORA_RANK,
    C_LORA_TARGETS,
    C_LORA_DOUBLE_QUANT,
    C_LORA_PAGED,
    C_OFFLOAD,
    C_OPTIMIZER,
    C_MASTER_WEIGHTS,
    C_GRAD_DTYPE,
    C_OVERHEAD,
    C_LORA_DROPOUT,
    C_DDP_IMPL,
    C_FSDP_REDUCE_DTYPE,
    C_MODEL_CODE,
    C_ATTENTION_IMPL,
    C_FRAGMENTATION,
    C_COUNT
};

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
     * optimizer | params), optimizer (adamw | adam8bit | sgd | adafactor),
     * master_weights (0 | 1), grad_dtype (fp32 | bf16 | fp16) and
     * memory_overhead_gib (CUDA context and NCCL; 0 for a
     * torch.cuda.max_memory_allocated figure) and memory_fragmentation (the
     * caching allocator's free share, training.memory_fragmentation; 0 for an
     * allocated-bytes figure). Empty = the scenario default.
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
     * something else (tests/validation/README.md, "Override columns"): lora_dropout (the
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
};

const char *validate_metric_name(enum validate_metric m)
{
    static const char *const n[VM_COUNT] = { "step_time_s", "tokens_per_s_per_gpu", "peak_mem_gib",
                                             "peak_reserved_gib" };
    return (unsigned)m < VM_COUNT ? n[m] : "?";
}

static void find_columns(const struct csv_table *t, int *col)
{
    for (int c = 0; c < C_COUNT; c++)
        col[c] = csv_column(t, columns[c].name);
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
 * The largest integer a column takes: 2^30, the YAML loader's bound (config/schema.c), so
 * that products of a few of them stay far inside 64 bits (4 * hidden for ffn_hidden did not
 * fit an int at INT_MAX).
 */
#define INT_COLUMN_MAX 1073741824.0

/* An integer in [min, 2^30]; empty gives `def`, or an error when the column is required. */
static int get_int(struct rowctx *rc, enum col c, int def, int min, int *out)
{
    const char *s = field(rc, c);
    char *end;
    double v;

    if (!*s) {
        if (columns[c].required)
            return bad(rc, "missing value for required column '%s'", columns[c].name);
        *out = def;
        return 0;
    }
    errno = 0;
    v = strtod(s, &end);
    if (end == s || *end || errno || v > floor(v) || v < min)
        return bad(rc, "%s '%s' is not an integer >= %d", columns[c].name, s, min);
    if (v > INT_COLUMN_MAX)
        return bad(rc, "%s '%s' is more than %.0f (2^30), the most any integer key takes",
                   columns[c].name, s, INT_COLUMN_MAX);
    *out = (int)v;
    return 0;
}

/*
 * The YAML words of scenario key `key` (config/schema.c), which the runs format shares: one
 * table spells each enumeration for both formats.
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
    char *end;
    double v;

    if (!*s)
        return 0;
    errno = 0;
    v = strtod(s, &end);
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
        get_int(rc, C_HEADS, 0, 1, &m->heads) || get_int(rc, C_KV_HEADS, 0, 0, &m->kv_heads) ||
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

/* Does the row state `key` itself (a non-empty column that sets it)? */
static bool row_given(const char *key, const void *ctx)
{
    const struct rowctx *rc = ctx;

    for (int c = 0; c < C_COUNT; c++)
        if (column_key[c] && !strcmp(column_key[c], key) && *field(rc, (enum col)c))
            return true;
    return false;
}

/* ---- framework profiles --------------------------------------------------------- */

struct profile_entry {
    char *name, *version; /* as the rows spell them */
    struct fw_state fw;   /* valid when ok */
    bool ok;
    char reason[256];
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

    find_columns(t, rc.col);
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
    memset(&err, 0, sizeof(err));
    if (scenario_finalize(s, &err))
        return bad(&rc, "%s", err.msg[0] ? err.msg : "invalid configuration");
    return 0;
}

/* ---- evaluating rows ------------------------------------------------------------ */

struct hw_entry {
    char *stem;
    struct hardware *hw; /* NULL when it failed to load */
    char reason[256];
};

struct runner {
    const struct validate_hooks *hooks;
    struct hw_entry *cache;
    int ncache;
    struct validate_profiles *profiles;
    struct validate_report *rep;
};

/* First "error: " message of a loader diagnostic, without its location prefix. */
static void first_error(FILE *f, char *out, size_t n)
{
    char line[512];
    const char *msg;

    out[0] = '\0';
    rewind(f);
    if (!fgets(line, sizeof(line), f))
        return;
    line[strcspn(line, "\n")] = '\0';
    msg = strstr(line, "error: ");
    set_str(out, n, msg ? msg + 7 : line);
}

static const struct hardware *default_load_hw(struct runner *ru, const char *stem, char *reason,
                                              size_t len)
{
    struct hw_entry *e;
    FILE *diag;

    for (int i = 0; i < ru->ncache; i++)
        if (!strcmp(ru->cache[i].stem, stem)) {
            set_str(reason, len, ru->cache[i].reason);
            return ru->cache[i].hw;
        }
    ru->cache = xrealloc(ru->cache, (size_t)(ru->ncache + 1) * sizeof(*ru->cache));
    e = &ru->cache[ru->ncache++];
    memset(e, 0, sizeof(*e));
    e->stem = xstrdup(stem);
    diag = tmpfile();
    e->hw = cfg_load_hardware(stem, diag ? diag : stderr);
    if (!e->hw) {
        char msg[200] = "";

        if (diag)
            first_error(diag, msg, sizeof(msg));
        snprintf(e->reason, sizeof(e->reason), "unknown hardware '%s'%s%s%s", stem,
                 msg[0] ? " (" : "", msg, msg[0] ? ")" : "");
    }
    if (diag)
        fclose(diag);
    set_str(reason, len, e->reason);
    return e->hw;
}

static void note_hardware(struct validate_report *rep, const char *stem, const struct hardware *hw)
{
    for (int i = 0; i < rep->nhw; i++)
        if (!strcmp(rep->hw[i].stem, stem))
            return;
    rep->hw = xrealloc(rep->hw, (size_t)(rep->nhw + 1) * sizeof(*rep->hw));
    rep->hw[rep->nhw].stem = xstrdup(stem);
    rep->hw[rep->nhw].calibration = hw && hw->calibration ? xstrdup(hw->calibration) : NULL;
    rep->nhw++;
}

static double metric_of(enum validate_metric m, const struct prediction *p)
{
    switch (m) {
    case VM_STEP_TIME:
        return p->step_time_s;
    case VM_TOKENS_PER_GPU:
        return p->tokens_per_s_per_gpu;
    case VM_PEAK_RESERVED: /* torch.cuda.max_memory_reserved: tensors and the allocator's reserve */
        return p->peak_reserved_bytes / (1024.0 * 1024 * 1024);
    default:
        return p->peak_mem_bytes / (1024.0 * 1024 * 1024);
    }
}

/* The row's own fields: id, metric and measured value, before any simulation. */
static int read_row_head(struct runner *ru, int i, const int *col, struct validate_row *r)
{
    const struct csv_table *t = ru->rep->csv;
    const char *v = csv_field(t, i, col[C_VALUE]);
    char *end;

    r->line = t->rows[i].line;
    r->id = csv_field(t, i, col[C_ID]);
    r->hardware = csv_field(t, i, col[C_HARDWARE]);
    r->metric_name = csv_field(t, i, col[C_METRIC]);
    r->metric = -1;
    r->measured = NAN;
    for (int m = 0; m < VM_COUNT; m++)
        if (!strcmp(r->metric_name, validate_metric_name((enum validate_metric)m)))
            r->metric = m;
    if (t->rows[i].nfields != t->ncols) {
        snprintf(r->reason, sizeof(r->reason), "row has %d fields, the header has %d",
                 t->rows[i].nfields, t->ncols);
        return -1;
    }
    if (!*r->id) {
        snprintf(r->reason, sizeof(r->reason), "missing value for required column 'id'");
        return -1;
    }
    for (int j = 0; j < i; j++)
        if (!strcmp(ru->rep->rows[j].id, r->id)) {
            snprintf(r->reason, sizeof(r->reason), "duplicate id '%s' (first on line %d)", r->id,
                     ru->rep->rows[j].line);
            return -1;
        }
    if (r->metric < 0) {
        snprintf(r->reason, sizeof(r->reason),
                 "unknown metric '%s' (expected step_time_s, tokens_per_s_per_gpu, peak_mem_gib "
                 "or peak_reserved_gib)",
                 r->metric_name);
        return -1;
    }
    r->measured = strtod(v, &end);
    if (!*v || *end || !(r->measured > 0) || !isfinite(r->measured)) {
        snprintf(r->reason, sizeof(r->reason), "value '%s' is not a positive number", v);
        r->measured = NAN;
        return -1;
    }
    return 0;
}

static void evaluate_row(struct runner *ru, int i, const int *col)
{
    struct validate_row *r = &ru->rep->rows[i];
    const struct hardware *hw;
    struct scenario s;
    struct prediction p;
    char reason[256] = "";

    if (read_row_head(ru, i, col, r))
        return;
    hw = ru->hooks && ru->hooks->load_hw
             ? ru->hooks->load_hw(r->hardware, reason, sizeof(reason), ru->hooks->ctx)
             : default_load_hw(ru, r->hardware, reason, sizeof(reason));
    note_hardware(ru->rep, r->hardware, hw);
    if (!hw) {
        snprintf(r->reason, sizeof(r->reason), "%s",
                 reason[0] ? reason : "cannot load the hardware description");
        return;
    }
    if (validate_row_scenario(ru->rep->csv, i, hw, ru->profiles, &s, r->reason, sizeof(r->reason)))
        return;
    memset(&p, 0, sizeof(p));
    reason[0] = '\0';
    if ((ru->hooks && ru->hooks->predict
             ? ru->hooks->predict(&s, &p, reason, sizeof(reason), ru->hooks->ctx)
             : predict_scenario(&s, &p, reason, sizeof(reason)))) {
        set_str(r->reason, sizeof(r->reason), reason[0] ? reason : "simulation failed");
        return;
    }
    if (!p.fits && r->metric != VM_PEAK_MEM && r->metric != VM_PEAK_RESERVED) {
        snprintf(r->reason, sizeof(r->reason),
                 "does not fit: predicted peak %.1f GiB per GPU exceeds %.1f GiB",
                 p.peak_mem_bytes / (1024.0 * 1024 * 1024),
                 p.capacity_bytes / (1024.0 * 1024 * 1024));
        return;
    }
    r->predicted = metric_of((enum validate_metric)r->metric, &p);
    if (!(r->predicted > 0) || !isfinite(r->predicted)) {
        snprintf(r->reason, sizeof(r->reason), "prediction is not a positive number (%g)",
                 r->predicted);
        return;
    }
    r->error_pct = 100 * (r->predicted - r->measured) / r->measured;
    r->ok = true;
}

void validate_group_stats(const struct validate_report *rep, enum validate_metric m,
                          const char *prefix, struct validate_stats *st)
{
    double *v = xmalloc((size_t)(rep->nrows ? rep->nrows : 1) * sizeof(*v));
    size_t plen = prefix && strcmp(prefix, "*") ? strlen(prefix) : 0;
    double sum = 0;

    memset(st, 0, sizeof(*st));
    for (int i = 0; i < rep->nrows; i++) {
        const struct validate_row *r = &rep->rows[i];

        if (r->metric != (int)m || (plen && strncmp(r->id, prefix, plen)))
            continue;
        if (!r->ok) {
            st->errors++;
            continue;
        }
        v[st->n++] = fabs(r->error_pct);
        sum += fabs(r->error_pct);
    }
    if (st->n) {
        st->mean = sum / st->n;
        st->median = fit_quantile(v, st->n, 0.5);
        st->p90 = fit_quantile(v, st->n, 0.9);
        st->max = fit_quantile(v, st->n, 1.0);
    }
    free(v);
}

static void summarize(struct validate_report *rep)
{
    for (int m = 0; m < VM_COUNT; m++)
        validate_group_stats(rep, (enum validate_metric)m, "*", &rep->stats[m]);
}

static int check_header(const struct csv_table *t, const int *col, FILE *diag)
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

int validate_table(struct csv_table *t, const struct validate_hooks *hooks,
                   struct validate_report *out, FILE *diag)
{
    struct runner ru = { .hooks = hooks, .rep = out };
    int col[C_COUNT];

    memset(out, 0, sizeof(*out));
    out->csv = t;
    out->path = t->name;
    find_columns(t, col);
    if (check_header(t, col, diag))
        return -1;
    out->rows = xcalloc((size_t)(t->nrows ? t->nrows : 1), sizeof(*out->rows));
    out->nrows = t->nrows;
    ru.profiles = out->profiles = validate_profiles_new();
    for (int i = 0; i < t->nrows; i++)
        evaluate_row(&ru, i, col);
    summarize(out);
    for (int i = 0; i < ru.ncache; i++) {
        free(ru.cache[i].stem);
        cfg_free_hw(ru.cache[i].hw);
    }
    free(ru.cache);
    return 0;
}

int validate_file(const char *path, const struct validate_hooks *hooks, struct validate_report *out,
                  FILE *diag)
{
    struct csv_error err;
    struct csv_table *t = csv_read_file(path, &err);

    if (!t) {
        memset(out, 0, sizeof(*out));
        if (diag)
            csv_print_error(path, &err, diag);
        return -1;
    }
    return validate_table(t, hooks, out, diag);
}

void validate_release(struct validate_report *r)
{
    for (int i = 0; i < r->nhw; i++) {
        free(r->hw[i].stem);
        free(r->hw[i].calibration);
    }
    free(r->hw);
    free(r->rows);
    csv_free(r->csv);
    validate_profiles_free(r->profiles);
    memset(r, 0, sizeof(*r));
}
