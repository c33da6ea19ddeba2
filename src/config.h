/*
 * config.h - the typed, validated description of one simulation: hardware,
 * model architecture (workload), training settings and parallel layout.
 *
 * config.c loads these structs from YAML (libyaml is included nowhere else),
 * resolves references (`hardware: dgx-h100` -> hardware/dgx-h100.yaml),
 * applies `--set key=value` overrides and validates everything, so later
 * stages may assert instead of checking. Every quantity is stored in base SI
 * units (bytes, bytes/s, FLOP/s, seconds as sim_time ns, watts).
 *
 * A struct scenario can also be built in code (validate builds one per CSV
 * row): scenario_defaults() fills every default, scenario_finalize() derives
 * the dependent values and applies the same semantic rules the loader applies.
 *
 * Memory: cfg_load_*() return objects that own all their strings in an arena;
 * cfg_free() releases everything. A struct scenario may be copied by value
 * (sweep and plan do) while the loaded original is alive.
 */
#ifndef SIMTRAIN_CONFIG_H
#define SIMTRAIN_CONFIG_H

#include <stdbool.h>
#include <stdio.h>

#include "util.h"

/* Numeric formats. Byte sizes: dtype_bytes(). */
enum dtype {
    DT_FP32,
    DT_TF32,
    DT_BF16,
    DT_FP16,
    DT_FP8,
    DT_INT8,
    DT_NF4,
    DT_COUNT
};
double dtype_bytes(enum dtype t); /* NF4 -> 0.5 (without quantization constants) */
const char *dtype_name(enum dtype t);

enum gpu_arch {
    ARCH_VOLTA,
    ARCH_AMPERE,
    ARCH_ADA,
    ARCH_HOPPER,
    ARCH_BLACKWELL
};

/* ---- hardware ------------------------------------------------------------ */

struct gpu_spec {
    const char *model;      /* marketing name, e.g. "H100 SXM5 80GB" */
    enum gpu_arch arch;     /* selects NCCL tuning tables and NVLS support */
    int sm_count;           /* streaming multiprocessors (wave quantization) */
    double mem_bytes;       /* device memory capacity, bytes */
    double mem_bw_Bps;      /* peak device memory bandwidth, bytes/s */
    double flops[DT_COUNT]; /* dense peak per dtype, FLOP/s; 0 = unsupported */
    double power_W;         /* board power, W; 0 = unknown */
};

/*
 * Compute cost-model parameters (cost.c). Shipped defaults come from published
 * microbenchmarks; `simtrain calibrate` writes a calibration file that
 * replaces them (hardware key `calibration:`).
 */
struct efficiency {
    double gemm_max;       /* best-shape GEMM throughput / peak, fraction */
    sim_time gemm_latency; /* fixed cost per GEMM kernel (small-size falloff), ns */
    int tile_m, tile_n;    /* output tile for tile/wave quantization, elements */
    double attn_flash;     /* fused (Flash) attention throughput / peak, fraction */
    double attn_standard;  /* unfused attention (GEMMs + softmax) / peak, fraction */
    double mem_bw;         /* achieved / peak memory bandwidth for memory-bound ops */
    double softmax_fwd;    /* Megatron fused softmax forward / memory-bound rate, fraction */
    double softmax_bwd;    /* ... backward */
    sim_time launch;       /* per-kernel launch and scheduling overhead, ns */
};

struct nvlink_spec {
    int generation;   /* NVLink generation (3 = A100, 4 = H100/H200, 5 = B200); 0 = none */
    int links;        /* links per GPU */
    double bw_Bps;    /* per GPU per direction, bytes/s; 0 = no NVLink */
    bool nvswitch;    /* all-to-all through NVSwitch (NVLS possible on Hopper+) */
    sim_time latency; /* per hop, ns */
};

struct pcie_spec {
    int generation;      /* PCIe generation */
    int lanes;           /* lanes per GPU */
    double bw_Bps;       /* achieved host<->device per direction, bytes/s */
    int gpus_per_switch; /* GPUs sharing one PCIe switch uplink */
    bool p2p;            /* GPU peer-to-peer over PCIe; false = staged through host memory */
    sim_time latency;    /* per hop, ns */
};

struct host_spec {
    double mem_bytes;  /* host DRAM per node, bytes */
    double mem_bw_Bps; /* host DRAM bandwidth per node, bytes/s */
    double adam_Pps;   /* CPU Adam throughput per GPU's share of the host, params/s */
};

struct network_spec {
    int nics_per_node;       /* compute NICs per node (storage NICs excluded) */
    double nic_bw_Bps;       /* per NIC per direction, bytes/s */
    bool rail_optimized;     /* same-index GPUs of all nodes share a leaf switch */
    int fabric_levels;       /* fat-tree levels (1 = single switch) */
    double oversubscription; /* upper-level oversubscription ratio, >= 1 */
    sim_time latency;        /* NIC-to-NIC one-way latency through one switch, ns */
    sim_time hop_latency;    /* each further switch hop, ns */
    bool amd_cpu;            /* host CPU vendor for NCCL's net overhead (false = Intel) */
};

/* One calibrated collective figure (a calibration file's `collectives:` list). */
struct coll_calib {
    int op;            /* enum coll_op */
    int algo;          /* enum coll_algo; ALGO_AUTO = any */
    int proto;         /* enum coll_proto; PROTO_AUTO = any */
    bool inter_node;   /* figure for groups spanning nodes */
    sim_time latency;  /* fitted alpha, ns */
    double bus_bw_Bps; /* fitted bus bandwidth, bytes/s */
};

struct hardware {
    const char *name;        /* file stem, e.g. "dgx-h100" */
    const char *path;        /* file it was loaded from, or "" */
    const char *calibration; /* calibration file path (resolved), or NULL */
    struct gpu_spec gpu;
    struct efficiency eff;
    int gpus_per_node;
    struct nvlink_spec nvlink;
    struct pcie_spec pcie;
    struct host_spec host;
    struct network_spec net;
    int nodes;                   /* default cluster size; scenarios override */
    struct coll_calib *coll_cal; /* calibrated collective figures (arena-owned), or NULL */
    int ncoll_cal;
};

/* ---- model architecture (workload) --------------------------------------- */

enum ffn_act {
    ACT_GELU,  /* two matrices h->f->h */
    ACT_SWIGLU /* three matrices: gate, up, down */
};

enum norm_kind {
    NORM_LAYERNORM,
    NORM_RMSNORM
};

enum pos_emb {
    POS_LEARNED,
    POS_ROPE,
    POS_NONE
};

struct moe_spec {
    int experts;            /* routed experts per MoE layer; 0 = dense model */
    int topk;               /* experts per token */
    int ffn_hidden;         /* expert MLP inner width */
    int layer_freq;         /* every k-th layer is MoE (1 = all) */
    int shared_experts;     /* always-active experts (DeepSeek style) */
    double capacity_factor; /* token capacity per expert vs uniform share; 0 = dropless */
    double load_imbalance;  /* busiest expert's tokens / the uniform share, >= 1 */
};

struct model {
    const char *name;
    int layers;
    int hidden;
    int heads;
    int kv_heads; /* = heads for MHA */
    int head_dim; /* = hidden / heads unless given */
    int ffn_hidden;
    int vocab;
    int max_seq; /* learned position table size (POS_LEARNED) */
    enum ffn_act act;
    enum norm_kind norm;
    enum pos_emb pos;
    bool tied_embeddings;
    bool bias;    /* linear layers carry biases (GPT-2/3 style) */
    bool dropout; /* dropout layers present (Korthikanti's 1-byte masks) */
    struct moe_spec moe;
};

/* ---- training ------------------------------------------------------------ */

enum optimizer_kind {
    OPT_ADAMW,
    OPT_ADAM8BIT, /* bitsandbytes block-wise 8-bit Adam */
    OPT_SGD,      /* with momentum */
    OPT_ADAFACTOR
};

enum recompute {
    RC_NONE,
    RC_SELECTIVE, /* Korthikanti: recompute attention core only */
    RC_FULL       /* checkpoint layer inputs, recompute whole layers */
};

enum attn_kind {
    ATTN_FLASH,
    ATTN_STANDARD
};

/* Which FlashAttention kernels run fused attention (cost.c). */
enum attn_impl {
    ATTN_IMPL_CUDA,  /* FlashAttention-2 CUDA kernels (the hardware's attn_flash efficiency) */
    ATTN_IMPL_TRITON /* FlashAttention in Triton (flash_attn_triton.py; MPT attn_impl: triton) */
};

/* How the loss reads the logits (workload.c, workload_head). */
enum cross_entropy {
    CE_FP32, /* logits upcast to fp32 and kept (Megatron, torch.nn.CrossEntropyLoss) */
    CE_FUSED /* one fused kernel on the 16-bit logits (flash_attn cross_entropy) */
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
    FT_QLORA
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

struct lora_spec {
    int rank;
    double alpha;
    unsigned targets;     /* enum lora_target bits */
    bool double_quant;    /* QLoRA double quantization of the NF4 constants */
    bool paged_optimizer; /* QLoRA paged optimizer (optimizer state may page to host) */
    double dropout;       /* lora_dropout probability on the adapter input; 0 = none */
};

enum offload {
    OFFLOAD_NONE,
    OFFLOAD_OPTIMIZER, /* ZeRO-Offload / FSDP CPU offload of optimizer states */
    OFFLOAD_PARAMS     /* optimizer states and parameters (ZeRO-3 offload) */
};

struct training {
    int seq_len;           /* tokens per sequence */
    int global_batch;      /* sequences per optimizer step */
    int micro_batch;       /* sequences per micro-batch per model replica */
    enum dtype precision;  /* matmul / activation dtype */
    bool master_weights;   /* fp32 master copy of the weights (mixed precision) */
    enum dtype grad_dtype; /* gradient accumulation buffer dtype */
    enum optimizer_kind optimizer;
    enum recompute recompute;
    int recompute_layers; /* RC_FULL: checkpointed layers per stage (0 = all) */
    enum attn_kind attention;
    enum attn_impl attention_impl; /* kernels of fused attention */
    enum cross_entropy cross_entropy;
    enum model_code model_code;
    enum finetune finetune;
    struct lora_spec lora;
    enum offload offload;
    double tokens;         /* tokens to train, for time-to-train; 0 = not given */
    double price_gpu_hour; /* price per GPU-hour, USD; 0 = not given */
    double overhead_bytes; /* CUDA context + NCCL per GPU, bytes */
    double fragmentation;  /* caching allocator: free share of the memory the step churns */
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
    enum framework framework;
    int order[DIM_COUNT];    /* placement, innermost (fastest-varying rank) first */
    int first_stage_layers;  /* layers on the first pipeline stage, 0 = even split */
    int last_stage_layers;   /* layers on the last pipeline stage, 0 = even split */
    bool tp_comm_overlap;    /* overlap TP communication with compute */
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
};

enum coll_algo {
    ALGO_AUTO,
    ALGO_RING,
    ALGO_TREE,
    ALGO_NVLS,
    ALGO_NVLS_TREE,
    ALGO_HIER, /* intra-node reduce-scatter, inter-node all-reduce, intra all-gather */
    ALGO_COUNT
};

enum coll_proto {
    PROTO_AUTO,
    PROTO_LL,
    PROTO_LL128,
    PROTO_SIMPLE,
    PROTO_COUNT
};

/* Collective operations (nccl-tests names). */
enum coll_op {
    COLL_ALL_REDUCE,
    COLL_ALL_GATHER,
    COLL_REDUCE_SCATTER,
    COLL_BROADCAST,
    COLL_REDUCE,
    COLL_ALL_TO_ALL,
    COLL_SEND_RECV,
    COLL_OP_COUNT
};
const char *coll_op_name(enum coll_op op);

struct nccl_cfg {
    enum coll_algo algo;   /* like NCCL_ALGO */
    enum coll_proto proto; /* like NCCL_PROTO */
};

struct sim_cfg {
    int straggler_rank;        /* -1 = none; with --ranks all, this rank runs slower */
    double straggler_slowdown; /* compute time multiplier for the straggler, >= 1 */
    sim_time step_overhead;    /* fixed per-step host overhead (data loading, logging), ns */
};

struct cfg_source; /* the parsed YAML files, for diagnostics (config.c) */

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
    unsigned given;         /* values with derived defaults that were set explicitly
                               (enum cfg_given bits, config_schema.h) */
    struct cfg_source *src; /* NULL for scenarios built in code */
};

/* A `--set key=value` override. */
struct cfg_override {
    const char *key;   /* dotted path, e.g. "parallelism.dp" */
    const char *value; /* YAML scalar text */
    const char *arg;   /* the whole command-line argument, for diagnostics */
};

/* A semantic validation failure: which key, and why. */
struct cfg_error {
    char path[128]; /* dotted key the error is about, e.g. "parallelism.tp" */
    char msg[384];  /* diagnostic text, lowercase, no trailing period */
};

/*
 * Load a scenario file, resolve its hardware and workload references, apply
 * overrides in order, fill defaults and validate. On any error, print
 * compiler-style diagnostics (`file:line:col: error: ...` with the source line
 * and a caret) to `diag` and return NULL. The caller frees the result with
 * cfg_free().
 */
struct scenario *cfg_load_scenario(const char *path, const struct cfg_override *ovr, int novr,
                                   FILE *diag);

/*
 * Load a hardware description by name (`dgx-h100`, searched in the data
 * directories) or path. NULL and diagnostics on error. Free with cfg_free_hw().
 */
struct hardware *cfg_load_hardware(const char *name_or_path, FILE *diag);

/* Load a workload (model architecture) by name or path. Free with cfg_free_model(). */
struct model *cfg_load_model(const char *name_or_path, FILE *diag);

void cfg_free(struct scenario *s);
void cfg_free_hw(struct hardware *hw);
void cfg_free_model(struct model *m);

/* Fill every default of a scenario built in code (hardware and model left zero). */
void scenario_defaults(struct scenario *s);

/*
 * Derive dependent values left 0 (nodes, gpus, dp, head_dim, kv_heads,
 * ffn_hidden, moe.ffn_hidden; 1f1b becomes interleaved when vpp > 1) and check
 * the cross-field rules: degrees multiply to the GPU count, heads % tp, layers
 * % pp, global batch % (micro_batch * dp), and so on. Returns 0 when valid,
 * otherwise -1 with *err filled. Used by the loader, validate, sweep and plan.
 */
int scenario_finalize(struct scenario *s, struct cfg_error *err);

/*
 * Print a diagnostic for `err` at the YAML location of err->path in the
 * scenario's sources (or without a location for scenarios built in code).
 */
void cfg_report_error(const struct scenario *s, const struct cfg_error *err, FILE *diag);

/*
 * Set one field of a loaded scenario by dotted key from a YAML scalar, with
 * the loader's type and unit checks (sweep's --vary uses this). Returns 0 or
 * -1 with *err filled; the scenario must be re-finalized afterwards.
 */
int cfg_set(struct scenario *s, const char *key, const char *value, struct cfg_error *err);

/* Directories searched for `hardware: NAME` style references, in order. */
const char *cfg_data_dir(void);

/*
 * The software that runs the scenario: parallelism.framework, or for `auto` Megatron-LM under
 * any model parallelism (tp, pp, cp or ep > 1), DeepSpeed for the ZeRO stages, PyTorch else.
 */
enum framework scenario_framework(const struct scenario *s);

/*
 * Whose model code runs the layers: training.model_code, or for `auto` Megatron's under the
 * Megatron framework, Hugging Face + PEFT for LoRA / QLoRA under DeepSpeed (the Trainer /
 * Accelerate integration), LitGPT's layout for any other eager run.
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
const char *finetune_name(enum finetune f);
const char *algo_name(enum coll_algo a);
const char *proto_name(enum coll_proto p);
const char *arch_name(enum gpu_arch a);

#endif
