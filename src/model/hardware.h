/*
 * hardware.h - one system as the cost models see it: the GPU (peak FLOP/s per
 * dtype, memory and its bandwidth), the compute cost-model parameters, the
 * node (NVLink / NVSwitch, PCIe, host) and the cluster network, plus the
 * numeric formats. Plain data: config/ fills it from hardware/NAME.yaml, every
 * quantity in base SI units (bytes, bytes/s, FLOP/s, sim_time ns, watts).
 */
#ifndef SIMTRAIN_MODEL_HARDWARE_H
#define SIMTRAIN_MODEL_HARDWARE_H

#include <stdbool.h>

#include "base/util.h"

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
    double flops[DT_COUNT]; /* dense peak per dtype, FLOP/s (datasheet); 0 = unsupported */
    double power_W;         /* board power, W; 0 = unknown */
    /*
     * The GPU under load (cost.h, "GEMM peak"): tensor cores x dense FLOP per
     * clock per tensor core x the SM clock the part holds at its power cap on
     * random-data GEMMs of that dtype. All optional; without them GEMMs run
     * against the datasheet peak flops[].
     */
    int tensor_cores;             /* tensor cores on the die's enabled SMs; 0 = not given */
    double tc_flop_clk[DT_COUNT]; /* dense FLOP per clock per tensor core; 0 = not given */
    double clock_max_Hz; /* highest SM clock (nvidia-smi Max Clocks SM), Hz; 0 = not given */
    double clock_sust_Hz[DT_COUNT]; /* SM clock sustained at the power cap, per dtype, Hz; 0 = not
                                       given */
};

/*
 * Compute cost-model parameters (cost.c). Shipped defaults come from published
 * microbenchmarks; `simtrain calibrate` writes a calibration file that
 * replaces them (hardware key `calibration:`).
 */
struct efficiency {
    double gemm_max;       /* best-shape GEMM throughput / GEMM peak (cost_gemm_peak()), fraction */
    double gemm_max_fp8;   /* the same for FP8 GEMMs; 0 = gemm_max */
    sim_time gemm_latency; /* fixed cost per GEMM kernel (small-size falloff), ns */
    int tile_m, tile_n;    /* output tile for tile/wave quantization, elements */
    double attn_flash;     /* fused (Flash) attention throughput / peak, fraction */
    double attn_standard;  /* unfused attention (GEMMs + softmax) / peak, fraction */
    double mem_bw;         /* achieved / peak memory bandwidth for memory-bound ops */
    double softmax_fwd;    /* Megatron fused softmax forward / memory-bound rate, fraction */
    double softmax_bwd;    /* ... backward */
    sim_time launch;       /* per-kernel launch and scheduling overhead, ns */
    sim_time host_kernel;  /* host (CPU) time per kernel an eager PyTorch job issues, ns */
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

const char *arch_name(enum gpu_arch a);

/*
 * The rate of one GPU's copy between its memory and the host's (optimizer and activation
 * offload): its PCIe link, and at most its share of the host DRAM, since the copies of offload
 * run on all `gpus` of the job on a node at once (each byte crosses DRAM once). bytes/s.
 */
static inline double hw_host_copy_Bps(const struct hardware *hw, int gpus)
{
    int on_node = gpus < hw->gpus_per_node ? gpus : hw->gpus_per_node;
    double share = on_node > 0 ? hw->host.mem_bw_Bps / on_node : 0;

    return share > 0 && share < hw->pcie.bw_Bps ? share : hw->pcie.bw_Bps;
}

#endif
