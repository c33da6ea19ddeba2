/*
 * comm.h - the vocabulary of the collective library (NCCL): operations, algorithms
 * and protocols, shared by the scenario's `nccl:` settings, the calibration files
 * and the collective cost model in net/.
 */
#ifndef SIMTRAIN_MODEL_COMM_H
#define SIMTRAIN_MODEL_COMM_H

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
const char *algo_name(enum coll_algo a);
const char *proto_name(enum coll_proto p);

#endif
