/*
 * cost.h - compute kernel durations: a roofline with calibrated efficiencies.
 *
 * GEMM time (used by the simulator and fitted by `simtrain calibrate`):
 *
 *     tiles  = ceil(m / tile_m) * ceil(n / tile_n)
 *     waves  = ceil(tiles / sm_count)
 *     q_wave = tiles / (waves * sm_count)                       wave quantization
 *     q_tile = m*n / (ceil(m/tile_m)*tile_m * ceil(n/tile_n)*tile_n)   tile quantization
 *     t      = gemm_latency + 2*m*n*k / (peak[dtype] * gemm_max[dtype] * q_wave * q_tile)
 *
 * then at least the memory roofline (operands read once, output written once).
 * Tile and wave quantization: NVIDIA "Matrix Multiplication Background User's
 * Guide" ch. 3.1-3.2 as quoted in ml-engineering training/performance.
 *
 * GEMM peak: a GPU under load, not its datasheet. Where the hardware file
 * gives the clock model, peak[dtype] = tensor cores x dense FLOP per clock per
 * tensor core x the SM clock the part sustains at its power cap on random-data
 * GEMMs of that dtype (gpu.clock.sustained): matmuls on Hopper are power
 * limited, and random operands toggle more transistors than zeros (Horace He,
 * "Strangely, matrix multiplications on GPUs run faster when given
 * predictable data", thonking.ai 2024: A100 8192^3 cuBLAS 295 TFLOP/s on
 * zeros, 257 on randn). gemm_max[dtype] is then the kernel's efficiency at a
 * fixed clock (best shape), fitted by `simtrain calibrate` from measurements
 * that log their SM clock; gemm_max_fp8 is FP8's own (cuBLASLt FP8 kernels
 * reach a smaller share of their peak than BF16 ones, docs/calibration.md).
 * Without the clock model peak[dtype] is the datasheet's dense figure and
 * gemm_max the achieved fraction of it.
 *
 * Memory-bound kernels: t = launch + bytes / (mem_bw_Bps * eff.mem_bw)
 * (roofline, formulas.md §6.1, §6.4). Attention: FLOPs / (peak * attn_*), fused
 * attention with the published rate of its kernels at its shape (attn_table.h), its peak at
 * the sustained clock like the GEMMs' (cost_attn_peak()).
 * All functions are pure and return nanoseconds.
 */
#ifndef SIMTRAIN_COST_H
#define SIMTRAIN_COST_H

#include "model/scenario.h"

/* Default efficiencies for a hardware file without an `efficiency:` block. */
void cost_default_efficiency(struct efficiency *eff);

/* Quantization factor q_wave * q_tile of an m x n output on this GPU, in (0, 1]. */
double cost_gemm_quant(const struct gpu_spec *gpu, const struct efficiency *eff, double m,
                       double n);

/* Time of one (m x k) @ (k x n) GEMM in `dt`; `batch` independent GEMMs of that shape. */
sim_time cost_gemm(const struct gpu_spec *gpu, const struct efficiency *eff, enum dtype dt,
                   double m, double n, double k, double batch);

/* Same as cost_gemm but in seconds, without rounding (for fitting). */
double cost_gemm_seconds(const struct gpu_spec *gpu, const struct efficiency *eff, enum dtype dt,
                         double m, double n, double k, double batch);

/* Time of a memory-bound kernel moving `bytes` (read + written). */
sim_time cost_membound(const struct gpu_spec *gpu, const struct efficiency *eff, double bytes);

/* Time of fused (flash) or unfused attention doing `flops` with `bytes` of I/O. */
sim_time cost_attention(const struct gpu_spec *gpu, const struct efficiency *eff, enum dtype dt,
                        enum attn_kind kind, double flops, double bytes);

/*
 * Memory-bound work around the backward kernel of FlashAttention `impl`,
 * beyond its math (0 for the CUDA kernels, which write dq, dk, dv in place).
 * Triton (llm-foundry flash_attn_triton.py _flash_attn_backward, called by
 * MPT's triton_flash_attn_fn with q, k, v split from one Wqkv output): the
 * preprocess kernel reading O and dO, the fp32 dq accumulator zeroed by the
 * autotuner's pre-hook and copied to dq, and the cat of dq, dk, dv into the
 * Wqkv output gradient (split_with_sizes backward). `q_elems` elements of Q
 * (tokens x heads x head_dim per rank), `qkv_elems` of Q, K and V together,
 * `p` bytes per activation element.
 */
sim_time cost_attn_impl_bwd_extra(const struct gpu_spec *gpu, const struct efficiency *eff,
                                  enum attn_impl impl, double q_elems, double qkv_elems, double p);

/*
 * Memory-bound work of running a CUDA FlashAttention kernel on unpadded (varlen) tokens, as
 * llm-foundry's MPT flash_attn_fn does (training.attention_unpad): q, k, v each gathered to
 * (tokens, width) by flash_attn.bert_padding.unpad_input (torch.gather: read and write) and
 * the output scattered back by pad_input (zeros, then index_put); backward the output
 * gradient gathered, q, k, v gradients scattered into zeros, and their cat into the Wqkv
 * output gradient (qkv.chunk's backward). Forward (backward false) or backward duration;
 * `q_elems`, `qkv_elems` and `p` as for cost_attn_impl_bwd_extra(). 0 for no elements.
 */
sim_time cost_attn_unpad(const struct gpu_spec *gpu, const struct efficiency *eff, double q_elems,
                         double qkv_elems, double p, bool backward);

/* The shape fused-attention rates depend on (attn_table.h). */
struct attn_shape {
    double head_dim; /* width of one head */
    double seq;      /* key length each query attends over (the full sequence) */
    bool causal;     /* masked: kernels skip the blocks above the diagonal */
};

/*
 * Fused attention run by kernels `impl` doing `flops` (as executed: half the s^2 work when
 * causal) with `bytes` of I/O: FLOPs / (cost_attn_peak() x attn_flash x attn_rel_rate()), where
 * attn_flash is FlashAttention-2's efficiency at the reference shape and the published
 * per-shape rates of each implementation set the rest (attn_table.c), at least the memory
 * roofline, plus the launch.
 */
sim_time cost_flash_attention(const struct gpu_spec *gpu, const struct efficiency *eff,
                              enum dtype dt, enum attn_impl impl, const struct attn_shape *sh,
                              double flops, double bytes);

/*
 * Megatron's fused scale-mask-softmax kernels (megatron/fused_kernels/
 * scaled_masked_softmax.h, scaled_upper_triang_masked_softmax.h): one warp per
 * row, the row held in registers. Forward reads the 16-bit scores and writes
 * the probabilities; backward reads the output gradient and the probabilities
 * and writes the input gradient in place. The causal (upper-triangular) kernel
 * loads only the elements at or below the diagonal, half of each row on
 * average, and still writes every element. Time of `elems` scores of `p`
 * bytes: those bytes at the fraction of the memory-bound rate these kernels
 * were measured to reach on A100 (cost.c: FlashAttention App. E.6, Tables 12
 * and 13): forward 2p per score (1.5p causal) at 0.43, backward 3p (2p
 * causal) at 0.87.
 */
sim_time cost_fused_softmax(const struct gpu_spec *gpu, const struct efficiency *eff, double elems,
                            double p, bool causal, bool backward);

/* Datasheet peak FLOP/s for a dtype; falls back to bf16/fp16 when the dtype has no figure. */
double cost_peak_flops(const struct gpu_spec *gpu, enum dtype dt);

/*
 * The peak the GEMM model divides by (see the top of this file): tensor_cores x
 * tc_flop_clk x clock_sust_Hz of `dt` (bf16 and fp16 share one figure when only
 * one is given), or cost_peak_flops() without the clock model. FLOP/s.
 */
double cost_gemm_peak(const struct gpu_spec *gpu, enum dtype dt);

/* The same at SM clock `clock_Hz` (0: the sustained clock); the datasheet peak without a model. */
double cost_gemm_peak_at(const struct gpu_spec *gpu, enum dtype dt, double clock_Hz);

/*
 * The peak fused and unfused attention efficiencies are fractions of: the tensor-core peak of
 * `dt` at SM clock `clock_Hz` (0: the sustained clock of `dt`, FP8 attention at FP8's), as
 * cost_gemm_peak_at(); the datasheet peak without the clock model. A power-capped part
 * (hardware/grand-teton-h100.yaml) slows attention as much as its GEMMs. FLOP/s.
 */
double cost_attn_peak(const struct gpu_spec *gpu, enum dtype dt, double clock_Hz);

/* The sustained SM clock that prices `dt`'s GEMMs, Hz; 0 without the clock model. */
double cost_gemm_clock(const struct gpu_spec *gpu, enum dtype dt);

/* GEMM efficiency of `dt`: gemm_max_fp8 for FP8 when given, else gemm_max. */
double cost_gemm_eff(const struct efficiency *eff, enum dtype dt);

/*
 * The rate (0..1 of its own speed) a compute kernel keeps while NCCL kernels hold `held` of the
 * GPU's SMs (0..1; one SM per channel, engine/comms.c). An NCCL block does not share its SM
 * with compute kernels (NVIDIA/nccl #689, the maintainer's answer), so a kernel
 * with many short blocks runs at the free share, 1 - held. On Hopper the GEMMs are persistent:
 * cuBLAS's sm90 kernels launch one block per SM, each working through its tiles in a row, so
 * with some SMs held the blocks that find none run as a second wave after the first, and a
 * matmul next to an NCCL kernel takes about twice as long (pytorch/pytorch #143988: FSDP on
 * H100, "the matmuls take 2x as long to complete when they are overlapped with a NCCL kernel";
 * PR #147966 explains the two waves and adds an SM carve-out, off by default, torch >= 2.7):
 * the rate is 1 / ceil(1 / (1 - held)), 1/2 while the collectives hold under half the SMs.
 * Ampere's GEMMs launch a grid of tiles (the free share). Blackwell keeps the free share: its
 * persistent kernels take tiles through cluster launch control (CUTLASS sm100), and no
 * measurement of the effect there was found. Approximation:
 * a compute task is one kernel here, so a layer's non-GEMM kernels (norms, element-wise,
 * attention) take the GEMMs' rate. 0 when every SM is held.
 */
double cost_overlap_rate(const struct gpu_spec *gpu, double held);

#endif
