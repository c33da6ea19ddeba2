/*
 * schema.c - the key tables of every simtrain YAML file; see
 * schema.h. The generic extraction code is in extract.c and the
 * reference writer in doc.c.
 *
 * Defaults carry their source next to them. Hardware defaults without a
 * published figure are marked "estimate"; the shipped hardware files give
 * sourced values for all of them.
 */
#include "config/schema.h"

#include <stddef.h>

#define INT_LIM     1073741824.0 /* 2^30: products of a few ints stay far below INT64_MAX */
#define MSIZE(T, m) sizeof(((T *)0)->m)
#define AT(T, m)    .off = offsetof(T, m), .size = MSIZE(T, m)

#define INT(k, T, m, lo, d)     .key = k, .type = FT_INT, AT(T, m), .min = lo, .max = INT_LIM, .def = d
#define NUM(k, T, m, lo, hi, d) .key = k, .type = FT_FLOAT, AT(T, m), .min = lo, .max = hi, .def = d
#define QTY(k, T, m, u, d)      .key = k, .type = FT_QTY, AT(T, m), .unit = u, .def = d
#define BOOL(k, T, m, d)        .key = k, .type = FT_BOOL, AT(T, m), .def = d
#define ENUM(k, T, m, tbl, d)   .key = k, .type = FT_ENUM, AT(T, m), .names = tbl, .def = d
#define STR(k, T, m)            .key = k, .type = FT_STR, AT(T, m)
#define TEXT(k)                 .key = k, .type = FT_STR, .off = NO_STORE
#define SECT(k, T, m, s)        .key = k, .type = FT_SECTION, AT(T, m), .sub = &s
#define SECT0(k, s)             .key = k, .type = FT_SECTION, .off = 0, .sub = &s
#define SECTION(nm, rows, fl)                                                                      \
    {                                                                                              \
        .name = nm, .fields = rows, .nfields = ARRAY_LEN(rows), .flags = fl                        \
    }

/* ---- enumerations (the spellings of names.c) ---------------------------------------- */

static const struct enum_name arch_names[] = {
    { "volta", ARCH_VOLTA },   { "ampere", ARCH_AMPERE },       { "ada", ARCH_ADA },
    { "hopper", ARCH_HOPPER }, { "blackwell", ARCH_BLACKWELL }, { NULL, 0 },
};
static const struct enum_name precision_names[] = {
    { "bf16", DT_BF16 }, { "fp16", DT_FP16 }, { "fp8", DT_FP8 }, { "fp32", DT_FP32 }, { NULL, 0 },
};
static const struct enum_name grad_dtype_names[] = {
    { "fp32", DT_FP32 },
    { "bf16", DT_BF16 },
    { "fp16", DT_FP16 },
    { NULL, 0 },
};
static const struct enum_name optimizer_names[] = {
    { "adamw", OPT_ADAMW },
    { "adam8bit", OPT_ADAM8BIT },
    { "sgd", OPT_SGD },
    { "adafactor", OPT_ADAFACTOR },
    { NULL, 0 },
};
static const struct enum_name optimizer_impl_names[] = {
    { "fused", OPT_IMPL_FUSED },
    { "foreach", OPT_IMPL_FOREACH },
    { "for_loop", OPT_IMPL_FOR_LOOP },
    { "for_loop_sync", OPT_IMPL_FOR_LOOP_SYNC },
    { NULL, 0 },
};
static const struct enum_name recompute_names[] = {
    { "none", RC_NONE },
    { "selective", RC_SELECTIVE },
    { "full", RC_FULL },
    { NULL, 0 },
};
static const struct enum_name selective_names[] = {
    { "attention_core", SEL_ATTN_CORE },
    { "torchtitan_op", SEL_TORCHTITAN_OP },
    { "blocks", SEL_BLOCKS },
    { NULL, 0 },
};
static const struct enum_name pp_split_names[] = {
    { "auto", SPLIT_AUTO },
    { "even", SPLIT_EVEN },
    { "megatron", SPLIT_MEGATRON },
    { "torchtitan", SPLIT_TORCHTITAN },
    { "torchtitan_weighted", SPLIT_TORCHTITAN_W },
    { NULL, 0 },
};
static const struct enum_name cp_method_names[] = {
    { "p2p", CP_P2P },
    { "allgather", CP_ALLGATHER },
    { "alltoall", CP_ALLTOALL },
    { NULL, 0 },
};
static const struct enum_name attention_names[] = {
    { "flash", ATTN_FLASH },
    { "standard", ATTN_STANDARD },
    { NULL, 0 },
};
static const struct enum_name attention_impl_names[] = {
    { "cuda", ATTN_IMPL_CUDA },
    { "triton", ATTN_IMPL_TRITON },
    { "fa3", ATTN_IMPL_FA3 },
    { "cudnn", ATTN_IMPL_CUDNN },
    { NULL, 0 },
};
static const struct enum_name fp8_recipe_names[] = {
    { "none", FP8_NONE },
    { "te_delayed", FP8_TE_DELAYED },
    { "te_current", FP8_TE_CURRENT },
    { "torchao_tensorwise", FP8_TORCHAO_TENSORWISE },
    { "torchao_rowwise", FP8_TORCHAO_ROWWISE },
    { NULL, 0 },
};
static const struct enum_name model_code_names[] = {
    { "auto", CODE_AUTO }, { "megatron", CODE_MEGATRON },
    { "hf", CODE_HF },     { "litgpt", CODE_LITGPT },
    { NULL, 0 },
};
static const struct enum_name cross_entropy_names[] = {
    { "fp32", CE_FP32 },
    { "fused", CE_FUSED },
    { NULL, 0 },
};
static const struct enum_name finetune_names[] = {
    { "full", FT_FULL },           { "lora", FT_LORA }, { "qlora", FT_QLORA },
    { "lora_int8", FT_LORA_INT8 }, { NULL, 0 },
};
static const struct enum_name lora_target_names[] = {
    { "q", LORA_Q },       { "k", LORA_K },   { "v", LORA_V },       { "o", LORA_O },
    { "gate", LORA_GATE }, { "up", LORA_UP }, { "down", LORA_DOWN }, { NULL, 0 },
};
static const struct enum_name offload_names[] = {
    { "none", OFFLOAD_NONE },
    { "optimizer", OFFLOAD_OPTIMIZER },
    { "params", OFFLOAD_PARAMS },
    { "params_only", OFFLOAD_PARAMS_ONLY },
    { NULL, 0 },
};
static const struct enum_name act_offload_names[] = {
    { "none", ACT_OFFLOAD_NONE },
    { "streams", ACT_OFFLOAD_STREAMS },
    { "sync", ACT_OFFLOAD_SYNC },
    { NULL, 0 },
};
static const struct enum_name lora_save_names[] = {
    { "embed", LORA_SAVE_EMBED },
    { "head", LORA_SAVE_HEAD },
    { NULL, 0 },
};
static const struct enum_name schedule_names[] = {
    { "1f1b", SCHED_1F1B },
    { "gpipe", SCHED_GPIPE },
    { "interleaved", SCHED_INTERLEAVED },
    { "zb-h1", SCHED_ZB_H1 },
    { NULL, 0 },
};
static const struct enum_name sharding_names[] = {
    { "none", SHARD_NONE },
    { "zero1", SHARD_ZERO1 },
    { "zero2", SHARD_ZERO2 },
    { "zero3", SHARD_ZERO3 },
    { "fsdp", SHARD_FSDP },
    { "fsdp_grad_op", SHARD_FSDP_GRAD_OP },
    { "hsdp", SHARD_HSDP },
    { "fsdp_no_shard", SHARD_FSDP_NO_SHARD },
    { NULL, 0 },
};
static const struct enum_name framework_names[] = {
    { "auto", FW_AUTO },
    { "megatron", FW_MEGATRON },
    { "deepspeed", FW_DEEPSPEED },
    { "pytorch", FW_PYTORCH },
    { NULL, 0 },
};
static const struct enum_name ddp_impl_names[] = {
    { "auto", DDP_IMPL_AUTO },
    { "megatron", DDP_IMPL_MEGATRON },
    { "pytorch", DDP_IMPL_PYTORCH },
    { NULL, 0 },
};
static const struct enum_name zero3_gather_names[] = {
    { "coalesced", ZERO3_GATHER_COALESCED },
    { "per_param_sync", ZERO3_GATHER_PER_PARAM_SYNC },
    { NULL, 0 },
};
static const struct enum_name prefetch_names[] = {
    { "backward_pre", BWD_PREFETCH_PRE },
    { "backward_post", BWD_PREFETCH_POST },
    { "none", BWD_PREFETCH_NONE },
    { NULL, 0 },
};
static const struct enum_name algo_names[] = {
    { "auto", ALGO_AUTO }, { "ring", ALGO_RING },           { "tree", ALGO_TREE },
    { "nvls", ALGO_NVLS }, { "nvls_tree", ALGO_NVLS_TREE }, { "hier", ALGO_HIER },
    { NULL, 0 },
};
static const struct enum_name proto_names[] = {
    { "auto", PROTO_AUTO },     { "ll", PROTO_LL }, { "ll128", PROTO_LL128 },
    { "simple", PROTO_SIMPLE }, { NULL, 0 },
};
static const struct enum_name act_names[] = {
    { "gelu", ACT_GELU },
    { "swiglu", ACT_SWIGLU },
    { "geglu", ACT_GEGLU },
    { NULL, 0 },
};
static const struct enum_name norm_names[] = {
    { "layernorm", NORM_LAYERNORM },
    { "rmsnorm", NORM_RMSNORM },
    { NULL, 0 },
};
static const struct enum_name pos_names[] = {
    { "learned", POS_LEARNED },
    { "rope", POS_ROPE },
    { "none", POS_NONE },
    { NULL, 0 },
};
static const struct enum_name cpu_names[] = {
    { "intel", 0 },
    { "amd", 1 },
    { NULL, 0 },
};
static const struct enum_name coll_op_names[] = {
    { "all_reduce", COLL_ALL_REDUCE },
    { "all_gather", COLL_ALL_GATHER },
    { "reduce_scatter", COLL_REDUCE_SCATTER },
    { "broadcast", COLL_BROADCAST },
    { "reduce", COLL_REDUCE },
    { "all_to_all", COLL_ALL_TO_ALL },
    { "send_recv", COLL_SEND_RECV },
    { NULL, 0 },
};
static const struct enum_name scope_names[] = {
    { "intra", 0 },
    { "inter", 1 },
    { NULL, 0 },
};

/* ---- hardware ------------------------------------------------------------------------ */

#define FLOP(k, dt)                                                                                \
    .key = k, .type = FT_QTY, .off = offsetof(struct gpu_spec, flops) + (dt) * sizeof(double),     \
    .size = sizeof(double), .unit = UNIT_FLOPS

static const struct field flops_rows[] = {
    { FLOP("fp32", DT_FP32), .doc = "dense FP32 peak (non-tensor-core)" },
    { FLOP("tf32", DT_TF32), .doc = "dense TF32 tensor-core peak" },
    { FLOP("bf16", DT_BF16), .doc = "dense BF16 peak; bf16 or fp16 is required" },
    { FLOP("fp16", DT_FP16), .doc = "dense FP16 peak" },
    { FLOP("fp8", DT_FP8), .doc = "dense FP8 peak; omit where unsupported" },
    { FLOP("int8", DT_INT8), .doc = "dense INT8 peak" },
};
static const struct section flops_section = SECTION("gpu.flops", flops_rows, 0);

/* The clock model (hardware.h, cost.h "GEMM peak"): per tensor-core dtype. */
#define PER_DT(k, member, dt)                                                                      \
    .key = k, .off = offsetof(struct gpu_spec, member) + (dt) * sizeof(double),                    \
    .size = sizeof(double)
#define TC_DTYPES(macro, what)                                                                     \
    { macro("tf32", DT_TF32), .doc = "TF32 " what },                                               \
        { macro("bf16", DT_BF16), .doc = "BF16 " what },                                           \
        { macro("fp16", DT_FP16), .doc = "FP16 " what },                                           \
        { macro("fp8", DT_FP8), .doc = "FP8 " what },                                              \
    {                                                                                              \
        macro("int8", DT_INT8), .doc = "INT8 " what                                                \
    }
#define TC_FLOP(k, dt)  PER_DT(k, tc_flop_clk, dt), .type = FT_FLOAT, .min = 0, .max = 1e6
#define SUST_CLK(k, dt) PER_DT(k, clock_sust_Hz, dt), .type = FT_QTY, .unit = UNIT_FREQ

static const struct field tc_flop_rows[] = {
    TC_DTYPES(TC_FLOP, "dense FLOP per clock per tensor core"),
};
static const struct section tc_flop_section = SECTION("gpu.tensor_flop_per_clock", tc_flop_rows, 0);
static const struct field sust_clock_rows[] = {
    TC_DTYPES(SUST_CLK, "GEMMs on random data: SM clock held at the power cap"),
};
static const struct section sust_clock_section = SECTION("gpu.clock.sustained", sust_clock_rows, 0);
static const struct field clock_rows[] = {
    { QTY("max", struct gpu_spec, clock_max_Hz, UNIT_FREQ, NULL),
      .doc = "highest SM clock (nvidia-smi Max Clocks SM)" },
    { SECT0("sustained", sust_clock_section),
      .doc = "SM clock per dtype at the power cap, random-data GEMMs" },
};
static const struct section clock_section = SECTION("gpu.clock", clock_rows, 0);

static const struct field gpu_rows[] = {
    { STR("model", struct gpu_spec, model), .flags = F_REQUIRED, .doc = "marketing name" },
    { ENUM("arch", struct gpu_spec, arch, arch_names, NULL), .flags = F_REQUIRED,
      .doc = "architecture (NCCL tuning tables, NVLS support)" },
    { INT("sm_count", struct gpu_spec, sm_count, 1, NULL), .flags = F_REQUIRED,
      .doc = "streaming multiprocessors (wave quantization)" },
    { QTY("memory", struct gpu_spec, mem_bytes, UNIT_BYTES, NULL), .flags = F_REQUIRED,
      .doc = "device memory capacity" },
    { QTY("memory_bandwidth", struct gpu_spec, mem_bw_Bps, UNIT_BANDWIDTH, NULL),
      .flags = F_REQUIRED, .doc = "peak device memory bandwidth" },
    { SECT0("flops", flops_section), .flags = F_REQUIRED, .doc = "dense peaks per dtype" },
    { QTY("power", struct gpu_spec, power_W, UNIT_POWER, NULL), .doc = "board power (optional)" },
    { INT("tensor_cores", struct gpu_spec, tensor_cores, 1, NULL),
      .doc = "tensor cores of the enabled SMs (clock model, optional)" },
    { SECT0("tensor_flop_per_clock", tc_flop_section),
      .doc = "dense FLOP per clock per tensor core, per dtype (clock model)" },
    { SECT0("clock", clock_section), .doc = "SM clocks (clock model)" },
};
static const struct section gpu_section = SECTION("gpu", gpu_rows, 0);

/* Defaults equal cost_default_efficiency() (cost.c, with its sources); a test checks it. */
static const struct field efficiency_rows[] = {
    { NUM("gemm_max", struct efficiency, gemm_max, 0, 1, "0.80"),
      .doc = "best-shape GEMM throughput / GEMM peak (sustained-clock peak with gpu.clock)" },
    { NUM("gemm_max_fp8", struct efficiency, gemm_max_fp8, 0, 1, "0"), .flags = F_ZERO_OK,
      .doc = "the same for FP8 GEMMs; 0 = gemm_max" },
    { QTY("gemm_latency", struct efficiency, gemm_latency, UNIT_TIME, "5 us"), .flags = F_ZERO_OK,
      .doc = "fixed cost per GEMM kernel (small-size falloff)" },
    { INT("tile_m", struct efficiency, tile_m, 1, "128"), .doc = "output tile rows" },
    { INT("tile_n", struct efficiency, tile_n, 1, "128"), .doc = "output tile columns" },
    { NUM("attn_flash", struct efficiency, attn_flash, 0, 1, "0.50"),
      .doc = "fused (flash) attention throughput / peak" },
    { NUM("attn_standard", struct efficiency, attn_standard, 0, 1, "0.25"),
      .doc = "unfused attention throughput / peak" },
    { NUM("mem_bw", struct efficiency, mem_bw, 0, 1, "0.85"),
      .doc = "achieved / peak memory bandwidth of memory-bound kernels" },
    { NUM("softmax_fwd", struct efficiency, softmax_fwd, 0, 1, "0.43"),
      .doc = "Megatron fused softmax forward, fraction of the memory-bound rate" },
    { NUM("softmax_bwd", struct efficiency, softmax_bwd, 0, 1, "0.87"),
      .doc = "Megatron fused softmax backward, fraction of the memory-bound rate" },
    { QTY("launch", struct efficiency, launch, UNIT_TIME, "4 us"), .flags = F_ZERO_OK,
      .doc = "per-kernel launch overhead" },
    { QTY("host_kernel", struct efficiency, host_kernel, UNIT_TIME, "4 us"), .flags = F_ZERO_OK,
      .doc = "host CPU time per kernel of an eager PyTorch job (host-bound layers)" },
};
const struct section schema_efficiency = SECTION("efficiency", efficiency_rows, 0);

static const struct field nvlink_rows[] = {
    { INT("generation", struct nvlink_spec, generation, 1, NULL), .flags = F_REQUIRED,
      .doc = "NVLink generation (3 = A100, 4 = H100/H200, 5 = B200)" },
    { INT("links", struct nvlink_spec, links, 1, NULL), .doc = "links per GPU (optional)" },
    { QTY("bandwidth", struct nvlink_spec, bw_Bps, UNIT_BANDWIDTH, NULL), .flags = F_REQUIRED,
      .doc = "per GPU per direction" },
    { BOOL("nvswitch", struct nvlink_spec, nvswitch, "false"),
      .doc = "GPUs reach each other through NVSwitch" },
    /* Estimate: NCCL's NVLink hop latency is 0.6 us (LL) (formulas.md §5.3 hwLatencies). */
    { QTY("latency", struct nvlink_spec, latency, UNIT_TIME, "0.7 us"), .flags = F_ZERO_OK,
      .doc = "per hop" },
};
static const struct section nvlink_section = SECTION("node.nvlink", nvlink_rows, S_ABSENT_IS_NONE);

static const struct field pcie_rows[] = {
    { INT("generation", struct pcie_spec, generation, 1, NULL), .flags = F_REQUIRED,
      .doc = "PCIe generation" },
    { INT("lanes", struct pcie_spec, lanes, 1, "16"), .doc = "lanes per GPU" },
    { QTY("bandwidth", struct pcie_spec, bw_Bps, UNIT_BANDWIDTH, NULL), .flags = F_REQUIRED,
      .doc = "achieved host<->device per direction" },
    { INT("gpus_per_switch", struct pcie_spec, gpus_per_switch, 1, "1"),
      .doc = "GPUs sharing one PCIe switch uplink" },
    { BOOL("p2p", struct pcie_spec, p2p, "true"),
      .doc = "GPU peer-to-peer over PCIe; false = staged through host memory" },
    /* Estimate: NCCL's PCI hop latency is 1.0 us (LL) (formulas.md §5.3 hwLatencies). */
    { QTY("latency", struct pcie_spec, latency, UNIT_TIME, "1 us"), .flags = F_ZERO_OK,
      .doc = "per hop" },
};
static const struct section pcie_section = SECTION("node.pcie", pcie_rows, 0);

static const struct field host_rows[] = {
    { QTY("memory", struct host_spec, mem_bytes, UNIT_BYTES, NULL), .flags = F_REQUIRED,
      .doc = "host DRAM per node" },
    /* Estimate: a few DDR channels' worth; shipped hardware files give sourced values. */
    { QTY("memory_bandwidth", struct host_spec, mem_bw_Bps, UNIT_BANDWIDTH, "200 GB/s"),
      .doc = "host DRAM bandwidth per node" },
    /* Estimate: order of magnitude of DeepSpeed CPU-Adam per GPU's share of cores. */
    { QTY("adam_throughput", struct host_spec, adam_Pps, UNIT_RATE, "1 Gparam/s"),
      .doc = "CPU Adam throughput per GPU's share of the host" },
};
static const struct section host_section = SECTION("node.host", host_rows, 0);

static const struct field node_rows[] = {
    { INT("gpus", struct hardware, gpus_per_node, 1, NULL), .flags = F_REQUIRED,
      .doc = "GPUs per node" },
    { SECT("nvlink", struct hardware, nvlink, nvlink_section),
      .doc = "omit for PCIe-only systems" },
    { SECT("pcie", struct hardware, pcie, pcie_section), .flags = F_REQUIRED, .doc = "PCIe" },
    { SECT("host", struct hardware, host, host_section), .flags = F_REQUIRED, .doc = "host" },
};
static const struct section node_section = SECTION("node", node_rows, 0);

static const struct field network_rows[] = {
    { INT("nics_per_node", struct network_spec, nics_per_node, 1, NULL), .flags = F_REQUIRED,
      .doc = "compute NICs per node (storage NICs excluded)" },
    { QTY("nic_bandwidth", struct network_spec, nic_bw_Bps, UNIT_BANDWIDTH, NULL),
      .flags = F_REQUIRED, .doc = "per NIC per direction" },
    { BOOL("rail_optimized", struct network_spec, rail_optimized, "true"),
      .doc = "same-index GPUs of all nodes share a leaf switch" },
    { INT("fabric_levels", struct network_spec, fabric_levels, 1, "2"),
      .doc = "fat-tree levels (1 = single switch)" },
    { NUM("oversubscription", struct network_spec, oversubscription, 1, 0, "1"),
      .doc = "upper-level oversubscription ratio (1 = non-blocking)" },
    /* Estimate: NCCL's NET ring latency is 2.7 us (LL) (formulas.md §5.3 hwLatencies). */
    { QTY("latency", struct network_spec, latency, UNIT_TIME, "2 us"), .flags = F_ZERO_OK,
      .doc = "NIC-to-NIC one way through one switch" },
    { QTY("hop_latency", struct network_spec, hop_latency, UNIT_TIME, "0.3 us"), .flags = F_ZERO_OK,
      .doc = "each further switch hop (estimate)" },
    { ENUM("cpu", struct network_spec, amd_cpu, cpu_names, "intel"),
      .doc = "host CPU vendor (NCCL's network overhead)" },
};
static const struct section network_section = SECTION("network", network_rows, S_ABSENT_IS_NONE);

static const struct field hardware_rows[] = {
    { STR("name", struct hardware, name), .def_doc = "file stem", .doc = "system name" },
    { TEXT("description"), .doc = "free text" },
    { SECT("gpu", struct hardware, gpu, gpu_section), .flags = F_REQUIRED, .doc = "the GPU" },
    { SECT("efficiency", struct hardware, eff, schema_efficiency),
      .doc = "compute cost-model parameters" },
    { STR("calibration", struct hardware, calibration),
      .doc = "calibration file (path relative to this file, or a name in hardware/calibration/)" },
    { SECT0("node", node_section), .flags = F_REQUIRED, .doc = "one node" },
    { SECT("network", struct hardware, net, network_section),
      .doc = "omit for single-node systems without NICs" },
    { INT("nodes", struct hardware, nodes, 1, "1"), .doc = "default cluster size" },
};
const struct section schema_hardware = SECTION("", hardware_rows, 0);

/* ---- calibration files ------------------------------------------------------------------ */

static const struct field collective_rows[] = {
    { ENUM("op", struct coll_calib, op, coll_op_names, NULL), .flags = F_REQUIRED,
      .doc = "collective (nccl-tests name)" },
    { ENUM("algo", struct coll_calib, algo, algo_names, "auto"), .doc = "algorithm; auto = any" },
    { ENUM("proto", struct coll_calib, proto, proto_names, "auto"), .doc = "protocol; auto = any" },
    { ENUM("scope", struct coll_calib, inter_node, scope_names, NULL), .flags = F_REQUIRED,
      .doc = "intra: within a node; inter: spanning nodes" },
    { QTY("latency", struct coll_calib, latency, UNIT_TIME, NULL), .flags = F_REQUIRED | F_ZERO_OK,
      .doc = "fitted latency (alpha)" },
    { QTY("bus_bandwidth", struct coll_calib, bus_bw_Bps, UNIT_BANDWIDTH, NULL),
      .flags = F_REQUIRED, .doc = "fitted bus bandwidth" },
};
static const struct section collective_section = {
    .name = "collectives[]",
    .fields = collective_rows,
    .nfields = ARRAY_LEN(collective_rows),
    .elem_size = sizeof(struct coll_calib),
};

static const struct field calib_clock_rows[] = {
    { SECT0("sustained", sust_clock_section),
      .doc = "SM clock per dtype at the power cap, random-data GEMMs" },
};
static const struct section calib_clock_section = SECTION("clock", calib_clock_rows, 0);

static const struct field calibration_rows[] = {
    { TEXT("hardware"), .flags = F_REQUIRED, .doc = "the hardware name it was measured on" },
    { TEXT("source"), .doc = "free text: measurements, date, GPU" },
    { SECT("efficiency", struct hardware, eff, schema_efficiency),
      .doc = "replaces the named efficiency keys" },
    { SECT("clock", struct hardware, gpu, calib_clock_section),
      .doc = "replaces the named sustained SM clocks (gpu.clock.sustained)" },
    { .key = "collectives",
      .type = FT_TABLE,
      AT(struct hardware, coll_cal),
      .count_off = offsetof(struct hardware, ncoll_cal),
      .sub = &collective_section,
      .doc = "list of calibrated collective figures" },
    { .key = "fit", .type = FT_ANY, .off = NO_STORE, .doc = "free-form fit report (ignored)" },
};
const struct section schema_calibration = SECTION("", calibration_rows, 0);

/* ---- workload ---------------------------------------------------------------------------- */

static const struct field moe_rows[] = {
    { INT("experts", struct moe_spec, experts, 1, NULL), .flags = F_REQUIRED,
      .doc = "routed experts per MoE layer" },
    { INT("topk", struct moe_spec, topk, 1, NULL), .flags = F_REQUIRED,
      .doc = "experts per token" },
    { INT("ffn_hidden", struct moe_spec, ffn_hidden, 1, NULL), .given = GIVEN_MOE_FFN_HIDDEN,
      .def_doc = "the workload's ffn_hidden", .doc = "expert MLP inner width" },
    { INT("layer_freq", struct moe_spec, layer_freq, 1, "1"), .doc = "every k-th layer is MoE" },
    { INT("shared_experts", struct moe_spec, shared_experts, 0, "0"),
      .doc = "always-active experts (DeepSeek style)" },
    { NUM("capacity_factor", struct moe_spec, capacity_factor, 0, 0, "0"), .flags = F_ZERO_OK,
      .doc = "token capacity per expert vs uniform share; 0 = dropless" },
    { NUM("load_imbalance", struct moe_spec, load_imbalance, 1, 0, "1"),
      .doc = "tokens of the busiest expert / the uniform share (>= 1)" },
    { BOOL("router_bias", struct moe_spec, router_bias, "false"),
      .doc = "the router carries a bias per expert (gpt-oss)" },
};
static const struct section moe_section = SECTION("moe", moe_rows, S_ABSENT_IS_NONE);

static const struct field workload_rows[] = {
    { STR("name", struct model, name), .def_doc = "file stem", .doc = "model name" },
    { TEXT("description"), .doc = "free text" },
    { INT("layers", struct model, layers, 1, NULL), .flags = F_REQUIRED,
      .doc = "transformer layers" },
    { INT("hidden", struct model, hidden, 1, NULL), .flags = F_REQUIRED, .doc = "model width" },
    { INT("heads", struct model, heads, 1, NULL), .flags = F_REQUIRED, .doc = "attention heads" },
    { INT("kv_heads", struct model, kv_heads, 1, NULL), .given = GIVEN_KV_HEADS, .def_doc = "heads",
      .doc = "key/value heads (GQA when fewer than heads)" },
    { INT("head_dim", struct model, head_dim, 1, NULL), .given = GIVEN_HEAD_DIM,
      .def_doc = "hidden / heads", .doc = "width of one head" },
    { INT("ffn_hidden", struct model, ffn_hidden, 1, NULL), .given = GIVEN_FFN_HIDDEN,
      .def_doc = "4 * hidden", .doc = "MLP inner width" },
    { INT("vocab", struct model, vocab, 1, NULL), .flags = F_REQUIRED, .doc = "vocabulary size" },
    /* GPT-2/GPT-3 context length (2048 for GPT-3, Brown et al. 2020 §2.1). */
    { INT("max_seq", struct model, max_seq, 1, "2048"),
      .doc = "position table size for learned positions" },
    { ENUM("activation", struct model, act, act_names, "gelu"), .doc = "MLP activation" },
    { ENUM("norm", struct model, norm, norm_names, "layernorm"), .doc = "normalization" },
    { ENUM("position", struct model, pos, pos_names, "rope"), .doc = "position embedding" },
    { BOOL("tied_embeddings", struct model, tied_embeddings, "false"),
      .doc = "input embedding shared with the LM head" },
    { BOOL("bias", struct model, bias, "false"), .doc = "linear layers carry biases" },
    { BOOL("dropout", struct model, dropout, "false"), .doc = "dropout layers present" },
    { SECT("moe", struct model, moe, moe_section), .doc = "mixture of experts; dense when absent" },
    /* Architecture variants of imported configs (docs/workloads.md). */
    { BOOL("qkv_bias", struct model, qkv_bias, "false"),
      .doc = "q, k and v projections carry biases, the others not (Qwen2)" },
    { BOOL("qk_norm", struct model, qk_norm, "false"),
      .doc = "RMSNorm over each head of q and k (Qwen3, Gemma 3)" },
    { BOOL("post_norms", struct model, post_norms, "false"),
      .doc = "norms on the attention and MLP outputs as well: 4 per layer (Gemma 2/3)" },
    { BOOL("attention_sinks", struct model, attn_sinks, "false"),
      .doc = "one learned sink logit per head (gpt-oss)" },
    { BOOL("attention_softcap", struct model, attn_softcap, "false"),
      .doc = "tanh soft-capping of the attention scores (Gemma 2)" },
    { BOOL("logit_softcap", struct model, logit_softcap, "false"),
      .doc = "tanh soft-capping of the final logits (Gemma 2)" },
    { INT("attention_window", struct model, window, 0, "0"), .flags = F_ZERO_OK,
      .doc = "sliding-window attention: keys each query sees; 0 = full causal" },
    { INT("window_pattern", struct model, window_pattern, 0, "0"), .flags = F_ZERO_OK,
      .doc = "with a window, layer i attends globally when (i+1) % k == 0; 0 = every layer "
             "windowed" },
};
const struct section schema_workload = SECTION("", workload_rows, 0);

/* ---- scenario ------------------------------------------------------------------------------ */

static const struct field cluster_rows[] = {
    { INT("nodes", struct scenario, nodes, 1, NULL), .given = GIVEN_NODES,
      .def_doc = "hardware `nodes`, or enough for `gpus`", .doc = "nodes in the job" },
    { INT("gpus", struct scenario, gpus, 1, NULL), .given = GIVEN_GPUS,
      .def_doc = "nodes * GPUs per node",
      .doc = "GPUs in the job; fewer than a node's only on one node" },
};
static const struct section cluster_section = SECTION("cluster", cluster_rows, 0);

static const struct field lora_rows[] = {
    /* Targets q, v as Hu et al. 2021 §4.1 (LoRA); rank 16 and alpha = 2 * rank are a common
     * fine-tuning convention, not a published default. */
    { INT("rank", struct lora_spec, rank, 1, "16"), .doc = "adapter rank r" },
    { NUM("alpha", struct lora_spec, alpha, 0, 0, "32"), .given = GIVEN_LORA_ALPHA,
      .def_doc = "2 * rank", .doc = "scaling numerator (alpha / r)" },
    { .key = "targets",
      .type = FT_FLAGS,
      AT(struct lora_spec, targets),
      .names = lora_target_names,
      .def = "[q, v]",
      .doc = "adapted projections" },
    { BOOL("double_quant", struct lora_spec, double_quant, "true"),
      .doc = "QLoRA double quantization of the NF4 constants" },
    { BOOL("paged_optimizer", struct lora_spec, paged_optimizer, "false"),
      .doc = "QLoRA paged optimizer" },
    /* PEFT LoraConfig.lora_dropout defaults to 0.0; LitGPT's finetune/lora.py uses 0.05. */
    { NUM("dropout", struct lora_spec, dropout, 0, 1, "0"), .flags = F_ZERO_OK,
      .doc = "lora_dropout probability (> 0 keeps a dropped copy of each adapted input)" },
    { .key = "modules_to_save",
      .type = FT_FLAGS,
      AT(struct lora_spec, modules_to_save),
      .names = lora_save_names,
      .def = "[]",
      .doc = "modules trained whole beside the adapters (PEFT modules_to_save)" },
    { BOOL("dora", struct lora_spec, dora, "false"),
      .doc = "DoRA: a trained magnitude per output row and the weight norm every forward" },
};
static const struct section lora_section = SECTION("training.lora", lora_rows, 0);

static const struct field training_rows[] = {
    { INT("seq_len", struct training, seq_len, 1, NULL), .flags = F_REQUIRED,
      .doc = "tokens per sequence" },
    { INT("global_batch", struct training, global_batch, 1, NULL), .flags = F_REQUIRED,
      .doc = "sequences per optimizer step" },
    { INT("micro_batch", struct training, micro_batch, 1, "1"),
      .doc = "sequences per micro-batch per model replica" },
    { ENUM("precision", struct training, precision, precision_names, "bf16"),
      .doc = "matmul and activation dtype" },
    { BOOL("master_weights", struct training, master_weights, "true"),
      .doc = "fp32 master copy of the weights" },
    { ENUM("grad_dtype", struct training, grad_dtype, grad_dtype_names, "fp32"),
      .doc = "gradient accumulation dtype" },
    { ENUM("optimizer", struct training, optimizer, optimizer_names, "adamw"), .doc = "optimizer" },
    { ENUM("optimizer_impl", struct training, optimizer_impl, optimizer_impl_names, "fused"),
      .doc = "AdamW step: fused (one pass), foreach (multi-tensor), for_loop (a kernel per op "
             "per parameter), for_loop_sync (plus a host sync per parameter)" },
    { ENUM("recompute", struct training, recompute, recompute_names, "none"),
      .doc = "activation recomputation" },
    { INT("recompute_layers", struct training, recompute_layers, 0, "0"),
      .doc = "full: checkpointed layers per stage, 0 = all" },
    { ENUM("attention", struct training, attention, attention_names, "flash"),
      .doc = "attention kernel" },
    { ENUM("attention_impl", struct training, attention_impl, attention_impl_names, "cuda"),
      .doc = "flash kernels: cuda (FlashAttention-2), triton (flash_attn_triton.py), fa3 (Hopper), "
             "cudnn" },
    { ENUM("cross_entropy", struct training, cross_entropy, cross_entropy_names, "fp32"),
      .doc = "loss on fp32-upcast logits, or fused on 16-bit logits" },
    /* Issue 15 (FP8 as it runs, torch.compile): the framework profiles set these per stack. */
    { ENUM("fp8_recipe", struct training, fp8_recipe, fp8_recipe_names, NULL),
      .given = GIVEN_FP8_RECIPE, .def_doc = "te_delayed for precision fp8, else none",
      .doc = "how FP8 linears cast: Transformer Engine delayed / current scaling, torchao" },
    { BOOL("fp8_filter_small", struct training, fp8_filter_small, "false"),
      .doc = "torchao auto_filter_small_kn: linears too small to gain stay BF16" },
    { BOOL("compile", struct training, compile, "false"),
      .doc = "torch.compile: FP8 casts fused into their producers, fewer kernel launches" },
    { ENUM("model_code", struct training, model_code, model_code_names, "auto"),
      .doc = "whose modules: auto, megatron (fused), hf (Transformers + PEFT), litgpt" },
    { ENUM("finetune", struct training, finetune, finetune_names, "full"),
      .doc = "full training or adapters" },
    { SECT("lora", struct training, lora, lora_section), .doc = "LoRA / QLoRA adapters" },
    { ENUM("offload", struct training, offload, offload_names, "none"),
      .doc = "CPU offload (ZeRO-Offload / FSDP CPU offload)" },
    { BOOL("paged_optimizer", struct training, paged_optimizer, "false"),
      .doc = "optimizer states in paged memory (bitsandbytes paged_*), any finetune" },
    { ENUM("activation_offload", struct training, activation_offload, act_offload_names, "none"),
      .doc = "saved activations of each layer to host memory: streams or sync copies" },
    { QTY("tokens", struct training, tokens, UNIT_COUNT, NULL),
      .doc = "tokens to train, for time-to-train (optional)" },
    { NUM("price_per_gpu_hour", struct training, price_gpu_hour, 0, 0, NULL),
      .doc = "USD per GPU-hour, for cost (optional)" },
    /* Estimate: CUDA context 0.47-0.92 GiB plus ~1 GiB of NCCL and torch.distributed init
     * (ml-engineering "Additional GPU memory usage", formulas.md §2.10). */
    { QTY("memory_overhead", struct training, overhead_bytes, UNIT_BYTES, "1.5 GiB"),
      .flags = F_ZERO_OK, .doc = "CUDA context + NCCL per GPU" },
    /* Estimate: PyTorch's caching allocator leaves 15 % of its reserve unusable on average over
     * eight LLMs trained with recompute / LoRA / ZeRO / offload on A100 80GB (GMLake, Guo et
     * al., ASPLOS'24, arXiv:2401.08156, abstract: "15% (up to 33%)"); docs/memory.md. */
    { NUM("memory_fragmentation", struct training, fragmentation, 0, 0.9, "0.15"),
      .flags = F_ZERO_OK,
      .doc = "share of the allocator's reserve for the step's tensors that no request can use" },
    /* ---- framework profiles (frameworks/NAME.yaml, docs/frameworks.md) ---- */
    { STR("framework", struct training, framework), .def_doc = "other",
      .doc = "training software whose defaults apply: a profile in frameworks/ (simtrain "
             "frameworks)" },
    { STR("framework_version", struct training, framework_version),
      .def_doc = "the profile's current version", .doc = "release of that software" },
    { ENUM("selective_policy", struct training, selective, selective_names, "attention_core"),
      .doc = "what recompute selective recomputes: attention_core (Megatron), torchtitan_op "
             "(its per-op save list), blocks (whole blocks: recompute_every, recompute_fraction)" },
    { INT("recompute_every", struct training, recompute_every, 0, "0"), .flags = F_ZERO_OK,
      .doc = "whole-block recompute: only blocks whose 1-based index is a multiple of k "
             "(torchtitan's layer mode); 0 = every block" },
    { NUM("recompute_fraction", struct training, recompute_fraction, 0, 1, "1"),
      .doc = "whole-block recompute: this fraction of the blocks, evenly spaced (fms-fsdp)" },
};
static const struct section training_section = SECTION("training", training_rows, 0);

static const struct field parallelism_rows[] = {
    { INT("dp", struct parallelism, dp, 1, NULL), .given = GIVEN_DP,
      .def_doc = "GPUs / (tp * pp * cp)", .doc = "data-parallel degree" },
    { INT("tp", struct parallelism, tp, 1, "1"), .doc = "tensor-parallel degree" },
    { INT("pp", struct parallelism, pp, 1, "1"), .doc = "pipeline-parallel degree" },
    { INT("vpp", struct parallelism, vpp, 1, "1"), .doc = "model chunks per pipeline rank" },
    { INT("cp", struct parallelism, cp, 1, "1"), .doc = "context-parallel degree" },
    { INT("ep", struct parallelism, ep, 1, "1"), .doc = "expert-parallel degree, within dp" },
    { BOOL("sequence_parallel", struct parallelism, sequence_parallel, "false"),
      .doc = "Megatron sequence parallelism (needs tp > 1)" },
    { ENUM("schedule", struct parallelism, schedule, schedule_names, "1f1b"),
      .given = GIVEN_SCHEDULE, .def_doc = "1f1b; interleaved when vpp > 1",
      .doc = "pipeline schedule" },
    { ENUM("sharding", struct parallelism, sharding, sharding_names, "none"),
      .doc = "data-parallel sharding of model states" },
    { ENUM("framework", struct parallelism, framework, framework_names, "auto"),
      .doc = "whose implementation to model" },
    { .key = "order",
      .type = FT_ORDER,
      AT(struct parallelism, order),
      .def = "tp-cp-ep-dp-pp",
      .doc = "rank placement, innermost first" },
    { INT("first_stage_layers", struct parallelism, first_stage_layers, 0, "0"), .flags = F_ZERO_OK,
      .doc = "layers on the first pipeline stage; 0 = even split" },
    { INT("last_stage_layers", struct parallelism, last_stage_layers, 0, "0"), .flags = F_ZERO_OK,
      .doc = "layers on the last pipeline stage; 0 = even split" },
    /* ---- framework profiles: the stacks' pipeline splits (model/partition.c) ---- */
    { ENUM("pp_split", struct parallelism, pp_split, pp_split_names, "auto"),
      .doc = "layers over stages without first/last_stage_layers: auto (even, else embedding and "
             "loss as a layer each), even, megatron, torchtitan, torchtitan_weighted" },
    /* ---- framework profiles: context-parallel attention (strategy/layer.c) ---- */
    { ENUM("cp_method", struct parallelism, cp_method, cp_method_names, "p2p"),
      .doc = "context-parallel attention: p2p (Transformer Engine's ring), allgather or alltoall "
             "(torchtitan's rotate methods)" },
    { BOOL("tp_comm_overlap", struct parallelism, tp_comm_overlap, "false"),
      .doc = "overlap TP communication with compute" },
    /* Megatron-LM async_tensor_model_parallel_allreduce (on since late 2021; off with
     * --no-async-tensor-model-parallel-allreduce): the column-parallel GEMM's input-gradient
     * all-reduce runs alongside its weight gradient (layer.c). Sequence parallelism always
     * overlaps its reduce-scatter. */
    { BOOL("tp_async_allreduce", struct parallelism, tp_async_allreduce, "true"),
      .doc = "backward TP all-reduce of the input gradient overlaps the weight gradient" },
};
static const struct section parallelism_section = SECTION("parallelism", parallelism_rows, 0);

static const struct field ddp_rows[] = {
    /* PyTorch DDP bucket_cap_mb = 25 (x 1024 * 1024 bytes) and _DEFAULT_FIRST_BUCKET_BYTES =
     * 1 MiB (formulas.md §3.1, [PT distributed.py]). */
    { QTY("bucket_size", struct ddp_cfg, bucket_bytes, UNIT_BYTES, "25 MiB"),
      .doc = "gradient bucket size" },
    { QTY("first_bucket_size", struct ddp_cfg, first_bucket_bytes, UNIT_BYTES, "1 MiB"),
      .doc = "first (smallest) bucket" },
    /* Megatron's overlap_grad_reduce defaults to False (formulas.md §3.1, [MEG
     * distributed_data_parallel_config.py]); PyTorch DDP always overlaps. */
    { BOOL("overlap", struct ddp_cfg, overlap, "true"), .given = GIVEN_DDP_OVERLAP,
      .def_doc = "false for megatron and deepspeed (stage 0), else true",
      .doc = "all-reduce buckets during backward" },
    /* Megatron-LM --gradient-accumulation-fusion (on by default; apex
     * fused_weight_gradient_mlp_cuda): the weight-gradient GEMM adds into the
     * main_grad buffer. Without it DistributedDataParallel's param_hook runs
     * main_grad.add_(param.grad) for every parameter each micro-batch
     * (megatron/model/distributed.py), as in Megatron-LM before late 2021. */
    { BOOL("grad_accum_fusion", struct ddp_cfg, grad_accum_fusion, "true"),
      .doc = "megatron: weight-gradient GEMMs accumulate into main_grad (no separate add)" },
    /* Megatron-LM --DDP-impl {local, torch} (megatron/arguments.py of 2021): its own
     * contiguous-buffer DDP (ddp.c) or torch.nn.parallel.DistributedDataParallel; the
     * NAR21 Table 1 scripts (examples/sc21/run_table_1.sh) use torch when pp = 1. */
    { ENUM("impl", struct ddp_cfg, impl, ddp_impl_names, "auto"),
      .doc = "gradient reduction wrapper: auto (the framework's), megatron, pytorch" },
};
static const struct section ddp_section = SECTION("ddp", ddp_rows, 0);

/* DeepSpeed ZeRO config defaults, in elements (formulas.md §2.3, [DS config.py]). */
static const struct field zero_rows[] = {
    { QTY("reduce_bucket_size", struct zero_cfg, reduce_bucket_size, UNIT_COUNT, "5e8"),
      .doc = "elements per gradient reduce bucket" },
    { QTY("allgather_bucket_size", struct zero_cfg, allgather_bucket_size, UNIT_COUNT, "5e8"),
      .doc = "elements per parameter all-gather bucket" },
    { QTY("stage3_prefetch_bucket_size", struct zero_cfg, prefetch_bucket_size, UNIT_COUNT, "5e7"),
      .flags = F_ZERO_OK, .doc = "elements prefetched ahead (ZeRO-3); 0 = no prefetch" },
    /* Axolotl's ZeRO-3 JSONs write 0: the prefetch window min(max_live - available, bucket) is
     * then empty, nothing is prefetched (DeepSpeed partitioned_param_coordinator.py). */
    { QTY("stage3_max_live_parameters", struct zero_cfg, max_live_parameters, UNIT_COUNT, "1e9"),
      .flags = F_ZERO_OK, .doc = "elements resident before release (ZeRO-3); 0 = no prefetch" },
    { QTY("stage3_param_persistence_threshold", struct zero_cfg, param_persistence_threshold,
          UNIT_COUNT, "1e5"),
      .flags = F_ZERO_OK, .doc = "parameters smaller than this stay unpartitioned (ZeRO-3)" },
    { QTY("stage3_max_reuse_distance", struct zero_cfg, max_reuse_distance, UNIT_COUNT, "1e9"),
      .flags = F_ZERO_OK, .doc = "keep parameters reused within this many elements (ZeRO-3)" },
    { BOOL("overlap_comm", struct zero_cfg, overlap_comm, "false"), .given = GIVEN_OVERLAP_COMM,
      .def_doc = "true for zero3 with coalesced gathers, else false",
      .doc = "overlap reduction with backward" },
    { BOOL("contiguous_gradients", struct zero_cfg, contiguous_gradients, "true"),
      .doc = "copy gradients into one contiguous buffer" },
    { ENUM("stage3_gather", struct zero_cfg, stage3_gather, zero3_gather_names, "coalesced"),
      .doc = "ZeRO-3 parameter gathers: coalesced (DeepSpeed since mid-2021) or per_param_sync "
             "(0.3.13-0.4.x: one blocking all-gather per parameter, no prefetch)" },
};
static const struct section zero_section = SECTION("zero", zero_rows, 0);

/* PyTorch FSDP defaults (formulas.md §3.3, [PT fsdp/api.py]). */
static const struct field fsdp_rows[] = {
    { ENUM("backward_prefetch", struct fsdp_cfg, backward_prefetch, prefetch_names, "backward_pre"),
      .doc = "when the next all-gather is issued in backward" },
    { BOOL("forward_prefetch", struct fsdp_cfg, forward_prefetch, "false"),
      .doc = "explicit forward prefetch" },
    { BOOL("limit_all_gathers", struct fsdp_cfg, limit_all_gathers, "true"),
      .doc = "rate limiter: at most two units unsharded" },
    { BOOL("reshard_after_forward", struct fsdp_cfg, reshard_after_forward, "true"),
      .doc = "free gathered parameters after forward" },
    { .key = "version",
      .type = FT_INT,
      AT(struct fsdp_cfg, version),
      .min = 1,
      .max = 2,
      .def = "1",
      .doc = "1 = FlatParameter FSDP, 2 = per-parameter FSDP2" },
    { ENUM("param_dtype", struct fsdp_cfg, param_dtype, grad_dtype_names, "bf16"),
      .given = GIVEN_PARAM_DTYPE, .def_doc = "training.precision (bf16 for fp8)",
      .doc = "MixedPrecision.param_dtype" },
    { ENUM("reduce_dtype", struct fsdp_cfg, reduce_dtype, grad_dtype_names, "bf16"),
      .given = GIVEN_REDUCE_DTYPE, .def_doc = "training.precision (bf16 for fp8)",
      .doc = "MixedPrecision.reduce_dtype" },
    { ENUM("buffer_dtype", struct fsdp_cfg, buffer_dtype, grad_dtype_names, "bf16"),
      .given = GIVEN_BUFFER_DTYPE, .def_doc = "training.precision (bf16 for fp8)",
      .doc = "MixedPrecision.buffer_dtype" },
    /* ---- framework profiles: HSDP's shard group (torchtitan, fms-fsdp, Accelerate) ---- */
    { INT("shard_group", struct fsdp_cfg, shard_group, 0, "0"), .flags = F_ZERO_OK,
      .doc = "hsdp: data-parallel ranks per shard group (a divisor of dp); 0 = the "
             "data-parallel peers of one node" },
};
static const struct section fsdp_section = SECTION("fsdp", fsdp_rows, 0);

static const struct field nccl_rows[] = {
    { ENUM("algo", struct nccl_cfg, algo, algo_names, "auto"), .doc = "like NCCL_ALGO" },
    { ENUM("proto", struct nccl_cfg, proto, proto_names, "auto"), .doc = "like NCCL_PROTO" },
    { STR("version", struct nccl_cfg, version_text), .def_doc = "the model's tables (2.30)",
      .doc = "NCCL release (e.g. \"2.18.1\"): which algorithms it offers" },
};
static const struct section nccl_section = SECTION("nccl", nccl_rows, 0);

static const struct field simulation_rows[] = {
    { INT("straggler_rank", struct sim_cfg, straggler_rank, -1, "-1"),
      .doc = "with --ranks all, this rank computes slower; -1 = none" },
    { NUM("straggler_slowdown", struct sim_cfg, straggler_slowdown, 1, 0, "1"),
      .doc = "compute-time multiplier of the straggler" },
    { QTY("step_overhead", struct sim_cfg, step_overhead, UNIT_TIME, "0 s"), .flags = F_ZERO_OK,
      .doc = "fixed host time per step" },
};
static const struct section simulation_section = SECTION("simulation", simulation_rows, 0);

static const struct field scenario_rows[] = {
    { STR("name", struct scenario, name), .def_doc = "file stem", .doc = "scenario name" },
    { STR("description", struct scenario, description), .doc = "free text" },
    { .key = "hardware",
      .type = FT_REF,
      AT(struct scenario, hw),
      .sub = &schema_hardware,
      .flags = F_REQUIRED,
      .doc = "hardware name, path or inline mapping" },
    { .key = "workload",
      .type = FT_REF,
      AT(struct scenario, model),
      .sub = &schema_workload,
      .flags = F_REQUIRED,
      .doc = "workload name, path or inline mapping" },
    { SECT0("cluster", cluster_section), .doc = "job size" },
    { SECT("training", struct scenario, train, training_section), .flags = F_REQUIRED,
      .doc = "training settings" },
    { SECT("parallelism", struct scenario, par, parallelism_section), .doc = "parallel layout" },
    { SECT("ddp", struct scenario, ddp, ddp_section), .doc = "PyTorch DDP knobs" },
    { SECT("zero", struct scenario, zero, zero_section), .doc = "DeepSpeed ZeRO knobs" },
    { SECT("fsdp", struct scenario, fsdp, fsdp_section), .doc = "PyTorch FSDP knobs" },
    { SECT("nccl", struct scenario, nccl, nccl_section), .doc = "collective algorithm choice" },
    { SECT("simulation", struct scenario, sim, simulation_section), .doc = "simulation knobs" },
};
const struct section schema_scenario = SECTION("", scenario_rows, 0);
