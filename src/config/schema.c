/*
 * schema.c - the key tables of the hardware, calibration and workload files; see schema.h.
 * The scenario file's tables are in schema_scenario.c, the row macros and the enumeration
 * words both use in schema_internal.h, the generic extraction code in extract.c and the
 * reference writer in doc.c.
 *
 * Defaults carry their source next to them. Hardware defaults without a
 * published figure are marked "estimate"; the shipped hardware files give
 * sourced values for all of them.
 */
#include "config/schema_internal.h"

#include <stddef.h>

/* ---- enumerations (the spellings of names.c) ---------------------------------------- */

static const struct enum_name arch_names[] = {
    { "volta", ARCH_VOLTA },   { "ampere", ARCH_AMPERE },       { "ada", ARCH_ADA },
    { "hopper", ARCH_HOPPER }, { "blackwell", ARCH_BLACKWELL }, { NULL, 0 },
};
/* Also the words of nccl.algo and nccl.proto (schema_scenario.c). */
const struct enum_name schema_algo_names[] = {
    { "auto", ALGO_AUTO }, { "ring", ALGO_RING },           { "tree", ALGO_TREE },
    { "nvls", ALGO_NVLS }, { "nvls_tree", ALGO_NVLS_TREE }, { "hier", ALGO_HIER },
    { NULL, 0 },
};
const struct enum_name schema_proto_names[] = {
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
      .doc = "architecture (NCCL tuning tables, NVLS support, GEMMs beside NCCL kernels)" },
    { INTM("sm_count", struct gpu_spec, sm_count, 1, 4096, NULL), .flags = F_REQUIRED,
      .doc = "streaming multiprocessors (wave quantization)" },
    { QTY("memory", struct gpu_spec, mem_bytes, UNIT_BYTES, NULL), .flags = F_REQUIRED,
      .doc = "device memory capacity" },
    { QTY("memory_bandwidth", struct gpu_spec, mem_bw_Bps, UNIT_BANDWIDTH, NULL),
      .flags = F_REQUIRED, .doc = "peak device memory bandwidth" },
    { SECT0("flops", flops_section), .flags = F_REQUIRED, .doc = "dense peaks per dtype" },
    { QTY("power", struct gpu_spec, power_W, UNIT_POWER, NULL), .doc = "board power (optional)" },
    { INTM("tensor_cores", struct gpu_spec, tensor_cores, 1, 16384, NULL),
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
    { INTM("tile_m", struct efficiency, tile_m, 1, 4096, "128"), .doc = "output tile rows" },
    { INTM("tile_n", struct efficiency, tile_n, 1, 4096, "128"), .doc = "output tile columns" },
    { NUM("attn_flash", struct efficiency, attn_flash, 0, 1, "0.50"),
      .doc = "fused (flash) attention throughput / peak" },
    { NUM("attn_standard", struct efficiency, attn_standard, 0, 1, "0.25"),
      .doc = "unfused attention throughput / peak (fitted by calibrate; the simulation prices "
             "unfused attention as its GEMMs and softmax)" },
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
    { INTM("generation", struct nvlink_spec, generation, 1, 16, NULL), .flags = F_REQUIRED,
      .doc = "NVLink generation (3 = A100, 4 = H100/H200, 5 = B200)" },
    { INTM("links", struct nvlink_spec, links, 1, 1024, NULL),
      .doc = "links per GPU (optional; not modelled: NCCL's link count is bandwidth / 25 GB/s, 50 "
             "for NVLink 5)" },
    { QTY("bandwidth", struct nvlink_spec, bw_Bps, UNIT_BANDWIDTH, NULL), .flags = F_REQUIRED,
      .doc = "per GPU per direction" },
    { BOOL("nvswitch", struct nvlink_spec, nvswitch, "false"),
      .doc = "GPUs reach each other through NVSwitch" },
    /* Estimate: NCCL's NVLink hop latency is 0.6 us (LL) (formulas.md §5.3 hwLatencies). */
    { QTY("latency", struct nvlink_spec, latency, UNIT_TIME, "0.7 us"), .flags = F_ZERO_OK,
      .doc = "per hop (the route simtrain collective prints; collective times take NCCL's latency "
             "constants)" },
};
static const struct section nvlink_section = SECTION("node.nvlink", nvlink_rows, S_ABSENT_IS_NONE);

static const struct field pcie_rows[] = {
    { INTM("generation", struct pcie_spec, generation, 1, 16, NULL), .flags = F_REQUIRED,
      .doc = "PCIe generation" },
    { INTM("lanes", struct pcie_spec, lanes, 1, 64, "16"), .doc = "lanes per GPU" },
    { QTY("bandwidth", struct pcie_spec, bw_Bps, UNIT_BANDWIDTH, NULL), .flags = F_REQUIRED,
      .doc = "achieved host<->device per direction" },
    { INTM("gpus_per_switch", struct pcie_spec, gpus_per_switch, 1, 1024, "1"),
      .doc = "GPUs sharing one PCIe switch uplink" },
    { BOOL("p2p", struct pcie_spec, p2p, "true"),
      .doc = "GPU peer-to-peer over PCIe; false = staged through host memory" },
    /* Estimate: NCCL's PCI hop latency is 1.0 us (LL) (formulas.md §5.3 hwLatencies). */
    { QTY("latency", struct pcie_spec, latency, UNIT_TIME, "1 us"), .flags = F_ZERO_OK,
      .doc = "per hop (the route simtrain collective prints; collective times take NCCL's latency "
             "constants)" },
};
static const struct section pcie_section = SECTION("node.pcie", pcie_rows, 0);

static const struct field host_rows[] = {
    { QTY("memory", struct host_spec, mem_bytes, UNIT_BYTES, NULL), .flags = F_REQUIRED,
      .doc = "host DRAM per node" },
    /* Estimate: a few DDR channels' worth; shipped hardware files give sourced values. */
    { QTY("memory_bandwidth", struct host_spec, mem_bw_Bps, UNIT_BANDWIDTH, "200 GB/s"),
      .doc = "host DRAM bandwidth per node; a GPU's offload copies get at most its share" },
    /* Estimate: order of magnitude of DeepSpeed CPU-Adam per GPU's share of cores. */
    { QTY("adam_throughput", struct host_spec, adam_Pps, UNIT_RATE, "1 Gparam/s"),
      .doc = "CPU Adam throughput per GPU's share of the host" },
};
static const struct section host_section = SECTION("node.host", host_rows, 0);

static const struct field node_rows[] = {
    { INTM("gpus", struct hardware, gpus_per_node, 1, 1024, NULL), .flags = F_REQUIRED,
      .doc = "GPUs per node" },
    { SECT("nvlink", struct hardware, nvlink, nvlink_section),
      .doc = "omit for PCIe-only systems" },
    { SECT("pcie", struct hardware, pcie, pcie_section), .flags = F_REQUIRED, .doc = "PCIe" },
    { SECT("host", struct hardware, host, host_section), .flags = F_REQUIRED, .doc = "host" },
};
static const struct section node_section = SECTION("node", node_rows, 0);

static const struct field network_rows[] = {
    { INTM("nics_per_node", struct network_spec, nics_per_node, 1, 1024, NULL), .flags = F_REQUIRED,
      .doc = "compute NICs per node (storage NICs excluded)" },
    { QTY("nic_bandwidth", struct network_spec, nic_bw_Bps, UNIT_BANDWIDTH, NULL),
      .flags = F_REQUIRED, .doc = "per NIC per direction" },
    { BOOL("rail_optimized", struct network_spec, rail_optimized, "true"),
      .doc = "same-index GPUs of all nodes share a leaf switch" },
    { INTM("fabric_levels", struct network_spec, fabric_levels, 1, 8, "2"),
      .doc = "fat-tree levels (1 = single switch); traffic off its rail crosses 2 x (levels - "
             "1) further hops" },
    { NUM("oversubscription", struct network_spec, oversubscription, 1, 0, "1"),
      .doc = "upper-level oversubscription ratio (1 = non-blocking)" },
    /* Estimate: NCCL's NET ring latency is 2.7 us (LL) (formulas.md §5.3 hwLatencies). */
    { QTY("latency", struct network_spec, latency, UNIT_TIME, "2 us"), .flags = F_ZERO_OK,
      .doc = "NIC-to-NIC one way through one switch; each network step of a collective moves "
             "by its difference from 2 us (NCCL's latency constants)" },
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
    { INTM("nodes", struct hardware, nodes, 1, 1048576, "1"), .doc = "default cluster size" },
};
const struct section schema_hardware = SECTION("", hardware_rows, 0);

/* ---- calibration files ------------------------------------------------------------------ */

static const struct field collective_rows[] = {
    { ENUM("op", struct coll_calib, op, coll_op_names, NULL), .flags = F_REQUIRED,
      .doc = "collective (nccl-tests name)" },
    { ENUM("algo", struct coll_calib, algo, schema_algo_names, "auto"),
      .doc = "algorithm; auto = any" },
    { ENUM("proto", struct coll_calib, proto, schema_proto_names, "auto"),
      .doc = "protocol; auto = any" },
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
