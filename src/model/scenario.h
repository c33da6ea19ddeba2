/*
 * scenario.h - the typed, validated description of one simulation: hardware,
 * model architecture, training settings and parallel layout, and the rules
 * that follow from them (which framework and model code run it).
 *
 * config/ loads it from YAML and validates everything, so later stages may
 * assert instead of checking. Every quantity is stored in base SI units
 * (bytes, bytes/s, FLOP/s, seconds as sim_time ns, watts). A struct scenario
 * may be copied by value (sweep and plan do) while the loaded original is alive.
 */
#ifndef SIMTRAIN_MODEL_SCENARIO_H
#define SIMTRAIN_MODEL_SCENARIO_H

#include <stdbool.h>
#include <stdint.h>

#include "model/arch.h"
#include "model/comm.h"
#include "model/hardware.h"

/* ---- training ------------------------------------------------------------ */

enum optimizer_kind {
    OPT_ADAMW,
    OPT_ADAM8BIT, /* bitsandbytes block-wise 8-bit Adam */
    OPT_SGD,      /* with momentum */
    OPT_ADAFACTOR,
    OPT_TORCHAO_ADAMW8BIT, /* torchao AdamW8bit: uint8 codes, fp32 scale per 256 (memory.c) */
    OPT_TORCHAO_ADAMW4BIT, /* torchao AdamW4bit: packed 4-bit codes, fp32 scale per 128 */
    OPT_TORCHAO_ADAMWFP8   /* torchao AdamWFp8: float8_e4m3fn codes, fp32 scale per 256 */
};

/*
 * How the optimizer step runs its AdamW update (training.optimizer_impl; memory.c
 * memory_optimizer_traffic(), workload_host.c workload_optimizer_time()):
 */
enum optimizer_impl {
    OPT_IMPL_FUSED,        /* one pass over the states: apex / TE / DeepSpeed FusedAdam,
                            * torch.optim.AdamW(fused=True) */
    OPT_IMPL_FOREACH,      /* torch's multi-tensor AdamW: one kernel per op per group of tensors */
    OPT_IMPL_FOR_LOOP,     /* a Python loop over the parameters, each op its own kernel */
    OPT_IMPL_FOR_LOOP_SYNC /* the same, reading a device step counter per parameter (a host sync
                            * each: Composer DecoupledAdamW since v0.16) */
};

enum recompute {
    RC_NONE,
    RC_SELECTIVE, /* what training.selective_policy names (Megatron: the attention core) */
    RC_FULL       /* checkpoint layer inputs, recompute whole layers */
};

/* What `recompute: selective` recomputes (training.selective_policy; workload_layer.c, rules.c). */
enum selective_policy {
    SEL_ATTN_CORE,     /* Megatron: the attention core (KOR22 §5) */
    SEL_TORCHTITAN_OP, /* torchtitan's op save list: matmuls but every 2nd, SDPA, reduce-scatter */
    SEL_BLOCKS         /* whole blocks (fms-fsdp, torchtitan's layer mode): recompute_every /
                          recompute_fraction choose which */
};

enum attn_kind {
    ATTN_FLASH,
    ATTN_STANDARD
};

/* Which kernels run fused attention (cost.c, attn_table.c: published rates of each). */
enum attn_impl {
    ATTN_IMPL_CUDA,   /* FlashAttention-2 CUDA kernels (the hardware's attn_flash efficiency) */
    ATTN_IMPL_TRITON, /* FlashAttention in Triton (flash_attn_triton.py; MPT attn_impl: triton) */
    ATTN_IMPL_FA3,    /* FlashAttention-3 (Hopper only) */
    ATTN_IMPL_CUDNN   /* cuDNN fused attention (PyTorch SDPA's cuDNN backend, Transformer Engine) */
};

/*
 * How FP8 training casts the projections (training.fp8_recipe, workload.c "FP8 linears"):
 * Transformer Engine's delayed scaling (scale from the amax history, amax fused into the
 * cast) or current scaling (Float8CurrentScaling: an amax pass before each cast), torchao
 * Float8Linear's dynamic tensorwise or rowwise scaling. NONE: no FP8 (precision not fp8).
 */
enum fp8_recipe {
    FP8_NONE,
    FP8_TE_DELAYED,
    FP8_TE_CURRENT,
    FP8_TORCHAO_TENSORWISE,
    FP8_TORCHAO_ROWWISE
};

/* How the loss reads the logits (workload.c, workload_head). */
enum cross_entropy {
    CE_FP32, /* logits upcast to fp32 and kept (Megatron, torch.nn.CrossEntropyLoss) */
    CE_FUSED /* one fused kernel on the 16-bit logits (flash_attn cross_entropy) */
};

/*
 * How eager (non-Megatron) model code runs RMSNorm without torch.compile (training.rmsnorm_impl;
 * workload.c wl_norm_op()): as the module's tensor ops, one kernel each (Transformers'
 * LlamaRMSNorm, torchtitan's RMSNorm class, torch's composite nn.RMSNorm before 2.9), or one
 * fused kernel (torch >= 2.9 nn.RMSNorm, Liger, apex).
 */
enum rmsnorm_impl {
    RMSNORM_PYTHON,
    RMSNORM_FUSED
};

/* Whose model code runs the layers (training.model_code; workload.c, memory.c). */
enum model_code {
    CODE_AUTO,     /* megatron for Megatron-LM; hf for adapters under DeepSpeed; else litgpt */
    CODE_MEGATRON, /* Megatron-LM's fused modules */
    CODE_HF,       /* Hugging Face Transformers modules, adapters from PEFT */
    CODE_LITGPT    /* LitGPT (lit_gpt/model.py, lora.py) and similar eager code */
};

enum finetune {
    FT_FULL,
    FT_LORA,
    FT_QLORA,
    FT_LORA_INT8 /* LoRA on an LLM.int8 base (bitsandbytes Linear8bitLt, load_in_8bit) */
};

/* LoRA target modules, a bitmask. */
enum lora_target {
    LORA_Q = 1 << 0,
    LORA_K = 1 << 1,
    LORA_V = 1 << 2,
    LORA_O = 1 << 3,
    LORA_GATE = 1 << 4,
    LORA_UP = 1 << 5,
    LORA_DOWN = 1 << 6
};

/* Modules trained whole beside the adapters (PEFT modules_to_save), a bitmask. */
enum lora_save {
    LORA_SAVE_EMBED = 1 << 0, /* the token embedding */
    LORA_SAVE_HEAD = 1 << 1   /* the LM head */
};

struct lora_spec {
    int rank;
    double alpha;
    unsigned targets;         /* enum lora_target bits */
    bool double_quant;        /* QLoRA double quantization of the NF4 constants */
    bool paged_optimizer;     /* QLoRA paged optimizer (optimizer state may page to host) */
    double dropout;           /* lora_dropout probability on the adapter input; 0 = none */
    unsigned modules_to_save; /* enum lora_save bits: trainable copies of whole modules */
    bool dora;                /* DoRA: magnitude vectors and the weight norm per forward */
};

enum offload {
    OFFLOAD_NONE,
    OFFLOAD_OPTIMIZER,  /* ZeRO-Offload / FSDP CPU offload of optimizer states */
    OFFLOAD_PARAMS,     /* optimizer states and parameters (ZeRO-3 offload) */
    OFFLOAD_PARAMS_ONLY /* the 16-bit parameter partitions only (ZeRO-3 offload_param alone) */
};

/* Activation offloading: the saved tensors of each layer to host memory and back. */
enum act_offload {
    ACT_OFFLOAD_NONE,
    ACT_OFFLOAD_STREAMS, /* copies on a side stream (TRL OffloadActivations use_streams=True) */
    ACT_OFFLOAD_SYNC     /* copies on the compute stream (use_streams=False; Axolotl "legacy") */
};

struct training {
    int seq_len;           /* tokens per sequence */
    int global_batch;      /* sequences per optimizer step */
    int micro_batch;       /* sequences per micro-batch per model replica */
    enum dtype precision;  /* matmul / activation dtype */
    bool master_weights;   /* fp32 master copy of the weights (mixed precision) */
    enum dtype grad_dtype; /* gradient accumulation buffer dtype */
    enum optimizer_kind optimizer;
    enum optimizer_impl optimizer_impl; /* how the AdamW step runs (fused by default) */
    enum recompute recompute;
    int recompute_layers;            /* RC_FULL: checkpointed layers per stage (0 = all) */
    enum selective_policy selective; /* what RC_SELECTIVE recomputes */
    int recompute_every;       /* whole-block checkpointing: every k-th block (1-based), 0 = all */
    double recompute_fraction; /* whole-block checkpointing: fms-fsdp's fraction p, (0, 1] */
    enum attn_kind attention;
    enum attn_impl attention_impl; /* kernels of fused attention */
    bool attention_unpad;          /* CUDA kernels on varlen tokens: unpad / pad copies */
    enum cross_entropy cross_entropy;
    enum model_code model_code;
    enum fp8_recipe fp8_recipe; /* FP8 linears under precision fp8 (te_delayed by default) */
    bool fp8_filter_small;      /* torchao auto_filter_small_kn: small linears stay BF16 */
    bool fp8_params; /* Transformer Engine FP8 parameters (fp8_param_gather): FP8 data and
                        transpose instead of a 16-bit weight and its FP8 caches */
    bool compile;    /* torch.compile: casts and element-wise ops fused */
    enum rmsnorm_impl rmsnorm_impl; /* eager RMSNorm: op by op or one fused kernel */
    enum finetune finetune;
    double trainable_fraction; /* full fine-tuning: share of the parameters that train, the
                                  rest frozen (Axolotl unfrozen_parameters); 1 = all */
    struct lora_spec lora;
    enum offload offload;
    bool paged_optimizer; /* optimizer states in paged (unified) memory, any finetune */
    enum act_offload activation_offload; /* saved activations to host memory */
    double tokens;                       /* tokens to train, for time-to-train; 0 = not given */
    double price_gpu_hour;               /* price per GPU-hour, USD; 0 = not given */
    double overhead_bytes;               /* CUDA context + NCCL per GPU, bytes */
    double fragmentation;          /* caching allocator: free share of the memory the step churns */
    const char *framework;         /* training.framework: profile name; NULL = "other" */
    const char *framework_version; /* training.framework_version; NULL or "" = its current one */
};

/* ---- parallel layout ----------------------------------------------------- */

enum pp_schedule {
    SCHED_1F1B,
    SCHED_GPIPE,
    SCHED_INTERLEAVED,
    SCHED_ZB_H1
};

enum sharding {
    SHARD_NONE,         /* DDP / Megatron DDP: replicated, all-reduce */
    SHARD_ZERO1,        /* optimizer states (Megatron distributed optimizer) */
    SHARD_ZERO2,        /* + gradients */
    SHARD_ZERO3,        /* + parameters (DeepSpeed) */
    SHARD_FSDP,         /* PyTorch FULL_SHARD */
    SHARD_FSDP_GRAD_OP, /* PyTorch SHARD_GRAD_OP */
    SHARD_HSDP,         /* PyTorch HYBRID_SHARD */
    SHARD_FSDP_NO_SHARD /* PyTorch NO_SHARD */
};

/* How layers are split over pipeline stages when pp * vpp does not divide them
 * (parallelism.pp_split; partition.c). */
enum pp_split_rule {
    SPLIT_AUTO,         /* even; else the embedding and the loss as a layer each, if that divides */
    SPLIT_EVEN,         /* pp * vpp must divide the layers (Megatron-LM before core_r0.9.0) */
    SPLIT_MEGATRON,     /* account_for_embedding/loss_in_pipeline_split (Megatron-Core 0.12) */
    SPLIT_TORCHTITAN,   /* torchtitan 2024-12 generate_split_points */
    SPLIT_TORCHTITAN_W, /* torchtitan v0.1+: embedding and output weigh one layer each */
    SPLIT_MEGATRON_EMB, /* account_for_embedding_in_pipeline_split alone */
    SPLIT_MEGATRON_LOSS /* account_for_loss_in_pipeline_split alone */
};

/* How context-parallel attention gets the other ranks' K/V (parallelism.cp_method; layer.c). */
enum cp_method {
    CP_P2P,       /* Transformer Engine's ring: K/V (and dK/dV) to the next rank each step */
    CP_ALLGATHER, /* torchtitan: one all-gather of every K/V shard after the first sub-SDPA */
    CP_ALLTOALL   /* torchtitan: the ring as permute_tensor (all_to_all) each step */
};

/*
 * What the word `zero2` means on the stack (parallelism.zero2_impl; docs/sharding.md): DeepSpeed's
 * stage 2, or FSDP without resharding after forward (FSDP1 SHARD_GRAD_OP, FSDP2
 * reshard_after_forward=False), which the loader then runs as sharding fsdp_grad_op.
 */
enum zero2_impl {
    Z2_AUTO,      /* without a profile: fsdp under pp > 1 (Llama 3 §3.3.2), else deepspeed */
    Z2_DEEPSPEED, /* DeepSpeed ZeRO stage 2 */
    Z2_FSDP       /* PyTorch FSDP without resharding after forward */
};

enum framework {
    FW_AUTO, /* megatron when tp/pp/cp/ep > 1, else pytorch (deepspeed for zero*) */
    FW_MEGATRON,
    FW_DEEPSPEED,
    FW_PYTORCH
};

/* Parallel dimensions, in the order a placement string names them. */
enum par_dim {
    DIM_TP,
    DIM_CP,
    DIM_EP,
    DIM_DP,
    DIM_PP,
    DIM_COUNT
};

struct parallelism {
    int dp, tp, pp, vpp, cp, ep; /* degrees; dp derived from the GPU count when 0 */
    bool sequence_parallel;
    enum pp_schedule schedule;
    enum sharding sharding;
    enum zero2_impl zero2_impl; /* what the word zero2 means on the stack */
    bool zero2_read;            /* the scenario's zero2 was read as fsdp_grad_op */
    enum framework framework;
    int order[DIM_COUNT];        /* placement, innermost (fastest-varying rank) first */
    int first_stage_layers;      /* layers on the first pipeline stage, 0 = even split */
    int last_stage_layers;       /* layers on the last pipeline stage, 0 = even split */
    enum pp_split_rule pp_split; /* the layers over the stages, without first/last_stage_layers */
    enum cp_method cp_method;    /* context-parallel attention */
    bool tp_comm_overlap;        /* overlap TP communication with compute */
    bool tp_async_allreduce; /* backward input-gradient all-reduce overlaps the weight gradient */
};

/* Which data-parallel wrapper reduces the gradients (Megatron-LM's --DDP-impl local | torch). */
enum ddp_impl {
    DDP_IMPL_AUTO, /* the framework's own: Megatron's for megatron, else PyTorch's */
    DDP_IMPL_MEGATRON,
    DDP_IMPL_PYTORCH
};

struct ddp_cfg {
    double bucket_bytes;       /* PyTorch bucket_cap_mb (25 MB) */
    double first_bucket_bytes; /* PyTorch _DEFAULT_FIRST_BUCKET_BYTES (1 MB) */
    bool overlap;              /* all-reduce buckets during backward */
    bool grad_accum_fusion;    /* Megatron: weight-gradient GEMMs accumulate into main_grad */
    enum ddp_impl impl;        /* DDP wrapper (Megatron --DDP-impl) */
};

/* DeepSpeed ZeRO knobs, DeepSpeed's names; sizes in elements as DeepSpeed counts. */
/* How ZeRO-3 gathers its parameters (zero.stage3_gather). */
enum zero3_gather {
    ZERO3_GATHER_COALESCED,     /* DeepSpeed since mid-2021: prefetched, bucketed, asynchronous */
    ZERO3_GATHER_PER_PARAM_SYNC /* DeepSpeed 0.3.13-0.4.x: one blocking gather per parameter */
};

struct zero_cfg {
    double reduce_bucket_size;
    double allgather_bucket_size;
    double prefetch_bucket_size;        /* stage3_prefetch_bucket_size */
    double max_live_parameters;         /* stage3_max_live_parameters */
    double param_persistence_threshold; /* stage3_param_persistence_threshold */
    double max_reuse_distance;          /* stage3_max_reuse_distance */
    bool overlap_comm;
    bool contiguous_gradients;
    enum zero3_gather stage3_gather;
};

enum backward_prefetch {
    BWD_PREFETCH_PRE,
    BWD_PREFETCH_POST,
    BWD_PREFETCH_NONE
};

struct fsdp_cfg {
    enum backward_prefetch backward_prefetch;
    bool forward_prefetch;
    bool limit_all_gathers;
    bool reshard_after_forward;
    int version;             /* 1 = FlatParameter FSDP, 2 = per-parameter FSDP2 */
    enum dtype param_dtype;  /* MixedPrecision.param_dtype */
    enum dtype reduce_dtype; /* MixedPrecision.reduce_dtype */
    enum dtype buffer_dtype; /* MixedPrecision.buffer_dtype */
    int shard_group; /* HSDP: ranks per shard group; 0 = the data-parallel peers of a node */
};

struct nccl_cfg {
    enum coll_algo algo;      /* like NCCL_ALGO */
    enum coll_proto proto;    /* like NCCL_PROTO */
    int version;              /* NCCL release: major*10000 + minor*100 + patch; 0 = 2.30 */
    const char *version_text; /* nccl.version as written ("2.18.1"), or NULL */
};

struct sim_budget; /* engine/sim.h */

/*
 * What the training framework's CPU thread spends issuing a step, per operation class
 * (the frameworks/ profiles set them with their sources; workload_host.c counts the operations;
 * docs/host.md). The engine runs the issue on a host stream per rank (prog.h ST_HOST).
 */
struct host_cfg {
    sim_time kernel_launch;      /* per kernel an eager job launches, ns */
    sim_time autograd_node;      /* per autograd node: created in forward, run in backward, ns */
    sim_time python_op;          /* per Python-level op without a kernel (views, splits), ns */
    sim_time rng_fork;           /* per tensor-parallel RNG tracker fork (get/set state), ns */
    sim_time checkpoint_region;  /* per activation-checkpointed layer: save, re-enter, ns */
    sim_time collective_enqueue; /* per collective call (ProcessGroupNCCL enqueue), ns */
    sim_time step;               /* per step at the optimizer: overflow / grad-norm reads, ns */
    bool p2p_sync;               /* the CPU waits for each pipeline receive (cuda sync) */
    bool micro_batch_sync;       /* the CPU waits for the GPU before each micro-batch forward */
    double jitter;               /* per-rank host speed spread (coefficient of variation) */
    int seed;                    /* of the per-rank host speeds */
};

struct sim_cfg {
    int straggler_rank;        /* -1 = none; with --ranks all, this rank runs slower */
    double straggler_slowdown; /* compute time multiplier for the straggler, >= 1 */
    sim_time step_overhead;    /* fixed per-step host overhead (data loading, logging), ns */
    struct sim_budget *budget; /* NULL = none; else the work every step simulated from this
                                  scenario and its copies may spend (simtrain serve's bound per
                                  request; not a YAML key) */
};

struct cfg_source; /* the parsed YAML files, for diagnostics (config/load.c) */

/* ---- the training framework's profile (frameworks/NAME.yaml, config/profile.c) ------ */

#define FW_MAX_SETTINGS 128 /* settings of one profile version, its inherited ones included */

/*
 * One setting of a profile version: an unconditional default, or a rule's value set when its
 * condition holds. Shared, read-only, by every scenario that selects the version; `impl` is
 * config/'s own data (the schema field and the parsed condition).
 */
struct fw_setting {
    const char *key;    /* dotted scenario key, "fsdp.reduce_dtype" */
    const char *value;  /* as the profile writes it */
    const char *source; /* file, commit and line it was read from */
    const char *when;   /* the rule's condition as text; NULL for a default */
    const void *impl;
};

/*
 * The profile a scenario runs under and what it did. Copied by value with the scenario (sweeps,
 * plan); the strings and settings live as long as the loaded scenario (or the validate run).
 */
struct fw_state {
    const char *name;    /* "other" when no profile was selected */
    const char *version; /* the version that applies */
    const char *asked;   /* the version string as written; NULL or "" = the current one */
    const char *reading; /* how `asked` selected `version` ("deepspeed 0.14.4 -> profile
                            'current' (v0.16.0, ...): ..."), NULL when it names it */
    const char *read;    /* the sources the version was read from */
    const char *note;    /* a caveat about the version, or NULL */
    const struct fw_setting *settings;
    int nsettings;
    uint64_t overridden[2]; /* bit i: the scenario sets settings[i].key itself */
    uint64_t applied[2];    /* bit i: settings[i] took effect in the last application */
    unsigned given;         /* GIVEN_* bits of keys the profile set (derived defaults skip them) */
    unsigned char base[FW_MAX_SETTINGS][8]; /* values of the keys before the profile set them */
};

static inline bool fw_bit(const uint64_t *bits, int i)
{
    return (bits[i / 64] >> (i % 64)) & 1u;
}

/* What became of a profile setting in the scenario (reports). */
enum fw_status {
    FWS_APPLIED,    /* it set its key */
    FWS_OVERRIDDEN, /* the scenario sets the key itself */
    FWS_REPLACED,   /* a later setting of the same key took its place */
    FWS_INACTIVE    /* a rule whose condition does not hold */
};

enum fw_status fw_setting_status(const struct fw_state *fw, int i);
const char *fw_status_name(enum fw_status st);

/* Keys of fw with a setting of status st, each key once (a key the scenario sets may have
 * several settings: a version's, an inherited one's, rules). */
int fw_count(const struct fw_state *fw, enum fw_status st);

struct scenario {
    const char *name;
    const char *path;
    const char *description;
    struct hardware hw;
    struct model model;
    int nodes; /* nodes in the job */
    int gpus;  /* total GPUs = nodes * hw.gpus_per_node unless given */
    struct training train;
    struct parallelism par;
    struct ddp_cfg ddp;
    struct zero_cfg zero;
    struct fsdp_cfg fsdp;
    struct nccl_cfg nccl;
    struct sim_cfg sim;
    struct host_cfg host;
    unsigned given;         /* values with derived defaults that were set explicitly
                               (enum cfg_given bits, config/schema.h) */
    struct fw_state fw;     /* training.framework's profile, as applied */
    struct cfg_source *src; /* NULL for scenarios built in code */
};

/*
 * The software that runs the scenario: parallelism.framework, or for `auto` Megatron-LM under
 * any model parallelism (tp, pp, cp or ep > 1), DeepSpeed for the ZeRO stages, PyTorch else.
 */
enum framework scenario_framework(const struct scenario *s);

/*
 * Whose model code runs the layers: training.model_code, or for `auto` Megatron's under the
 * Megatron framework, Hugging Face + PEFT for LoRA / QLoRA under DeepSpeed (the Trainer /
 * Accelerate integration), Megatron's under DeepSpeed with tp or pp > 1 (Megatron-DeepSpeed),
 * LitGPT's layout for any other eager run. A framework profile sets it explicitly.
 */
enum model_code scenario_model_code(const struct scenario *s);

/* Does Megatron-LM's own DDP reduce the gradients? ddp.impl, or for `auto` whether the
 * framework is Megatron. */
bool scenario_megatron_ddp(const struct scenario *s);

/* Enum names as the YAML spells them (for reports). */
const char *sharding_name(enum sharding sh);
const char *schedule_name(enum pp_schedule s);
const char *recompute_name(enum recompute r);
const char *optimizer_name(enum optimizer_kind o);
const char *optimizer_impl_name(enum optimizer_impl o);
const char *finetune_name(enum finetune f);
const char *attn_impl_name(enum attn_impl i);
const char *fp8_recipe_name(enum fp8_recipe r);

#endif
