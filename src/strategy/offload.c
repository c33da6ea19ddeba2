/*
 * offload.c - CPU offload: host<->device copies over the rank's PCIe link, the optimizer step
 * on the host CPU (see dp_internal.h) and the copies of offloaded activations.
 *
 * What moves when is the strategies' business (zero.c, fsdp.c): ZeRO-Offload
 * copies each reduced gradient partition to the host as fp32 and the updated
 * 16-bit partition back after the CPU step (DeepSpeed stage_1_and_2.py
 * async_inplace_copy_grad_to_fp32_buffer_from_gpu, stage3.py
 * __partition_grads); ZeRO-3 parameter offload and FSDP CPUOffload copy each
 * parameter shard to the device before its all-gather and the sharded
 * gradient back after its reduction (FSDP _runtime_utils.py _offload_grad).
 *
 * CPU optimizer rate: rules_host_step_time() (rules.c): the hardware file's
 * host.adam_throughput for DeepSpeedCPUAdam, 1/6 of it for torch.optim.
 */
#include "strategy/dp_internal.h"

#include <string.h>

int offload_copy(struct build *b, bool to_device, double bytes, int dep, const char *label, int arg)
{
    struct prog *p = b->p;
    struct task t;
    int i;

    if (bytes <= 0)
        return -1;
    memset(&t, 0, sizeof(t));
    t.kind = TASK_COPY;
    t.stream = to_device ? ST_H2D : ST_D2H;
    t.tcat = TC_OFFLOAD;
    t.bytes = bytes;
    t.label = prog_label(p, label, arg);
    t.mb = -1;
    i = prog_add(p, &t);
    if (dep >= 0)
        prog_dep(p, i, dep);
    return i;
}

int offload_cpu_step(struct build *b, double params, int dep)
{
    struct prog *p = b->p;
    int i = prog_host(p, TC_OFFLOAD, rules_host_step_time(b->s, params),
                      prog_label(p, "CPU optimizer step", 0), -1);

    if (dep >= 0)
        prog_dep(p, i, dep);
    return i;
}

/*
 * Activation offloading (training.activation_offload; TRL 0.2x
 * trl/models/activation_offloading.py OffloadActivations, which Axolotl's
 * activation_offloading and `gradient_checkpointing: offload` enable): a
 * saved-tensors hook copies each layer's saved tensors to pinned host memory
 * during the forward and back on first use in the backward. With streams the
 * device-to-host copy runs on a side stream beside the next compute and the
 * GPU copy is freed when it completes; without (Axolotl's "legacy") it runs
 * on the compute stream, which waits for it. With streams the compute stream
 * still waits for the copy of the tensor max_fwd_stash_size (5) saves back
 * before saving another (`self.s0.wait_event(ev)` in pack_tensor), fewer than
 * a layer's: modelled as the next layer waiting for this layer's copy, so at
 * most two layers' tensors are in flight and the forward runs no faster than
 * the link. Either way the backward waits for the host-to-device copy of the
 * tensors it unpacks (`s0.wait_stream(s1)`). What moves is what the layer
 * saves under its recompute: the checkpointed input under full recomputation,
 * everything otherwise. Returns what the next unit waits for.
 */
int offload_activations(struct build *b, int ui, double bytes, int t, int last)
{
    struct prog *p = b->p;
    int c, wait, join;

    if (b->s->train.activation_offload == ACT_OFFLOAD_NONE || bytes <= 0)
        return t;
    c = offload_copy(b, false, bytes, last, "activations L%d to host", b->units[ui].layer);
    task_mem_end(&p->tasks[c], MC_ACT, -bytes_i64(bytes));
    wait = c;
    if (b->s->train.activation_offload == ACT_OFFLOAD_STREAMS) {
        wait = b->act_d2h;
        b->act_d2h = c;
        if (wait < 0)
            return t;
    }
    join = prog_mark(p, ST_COMPUTE, prog_label(p, "wait for the activation copy", 0));
    prog_dep(p, join, wait);
    if (t >= 0 && t != wait)
        prog_dep(p, join, t);
    return join;
}

/* The backward's copy of an offloaded layer's saved tensors back to the device, after `prev`. */
int offload_fetch_activations(struct build *b, int ui, double bytes, int prev)
{
    struct prog *p = b->p;
    int c, dep = prev >= 0 ? prev : b->last_bwd >= 0 ? b->last_bwd : b->last_fwd;

    if (b->s->train.activation_offload == ACT_OFFLOAD_NONE || bytes <= 0)
        return prev;
    c = offload_copy(b, true, bytes, dep, "activations L%d to device", b->units[ui].layer);
    task_mem_start(&p->tasks[c], MC_ACT, bytes_i64(bytes));
    return c;
}
