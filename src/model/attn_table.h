/*
 * attn_table.h - how fast each fused-attention implementation runs on each GPU generation,
 * by head dimension, sequence length and causal masking, from the published kernel
 * benchmarks (attn_table.c cites each table).
 *
 * The cost model (cost.h) prices fused attention as FLOPs / (peak x attn_flash x rel),
 * where attn_flash is the hardware's FlashAttention-2 forward+backward efficiency at the
 * reference shape (head dimension 128, sequence 8192, no causal mask) and rel is
 * attn_rel_rate(): the published rate of `impl` at the given shape over FlashAttention-2's
 * at the reference shape, on the same generation. Rates count FLOPs as the benchmarks do
 * (FlashAttention's benchmark_flash_attention.py): 4 b h s^2 d forward, halved when causal,
 * 3.5x that for forward + backward.
 */
#ifndef SIMTRAIN_ATTN_TABLE_H
#define SIMTRAIN_ATTN_TABLE_H

#include <stdbool.h>

#include "model/hardware.h"
#include "model/scenario.h"

/* Reference shape of efficiency.attn_flash (FlashAttention-2, forward + backward). */
#define ATTN_REF_HEAD_DIM 128
#define ATTN_REF_SEQ      8192

/*
 * Rate of fused attention `impl` on `arch` at head dimension `head_dim`, sequence `seq`
 * (query and key length), causal or not, relative to FlashAttention-2 at the reference
 * shape on that generation: interpolated in log2(seq) between the published points (512 ..
 * 16k) and linearly in head_dim between 64 and 128; outside, the nearest point. Pure.
 */
double attn_rel_rate(enum gpu_arch arch, enum attn_impl impl, double head_dim, bool causal,
                     double seq);

/* Whether `impl` runs on `arch` (FlashAttention-3 is Hopper-only). */
bool attn_impl_available(enum gpu_arch arch, enum attn_impl impl);

#endif
