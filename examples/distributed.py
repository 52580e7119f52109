"""Data-parallel training and a sliced contraction over MPI from Python (tenferro.distributed):

    PYTHONPATH=build/release/python mpirun -np 2 /usr/bin/python3 examples/distributed.py
    (as root: mpirun --allow-run-as-root; --oversubscribe for more ranks than cores)

Every rank generates the same regression data, keeps its shard, and trains a small tanh network
with Adam on the gradients of the whole batch (tf.distributed.value_and_grad); every rank ends
with the same parameters. Then the ranks share the slices of a contraction sliced to a memory
limit. Rank 0 prints the losses and the contraction's error; the exit status is 1 if the loss did
not fall or the contraction disagrees with the one-process one.
"""
import sys

import numpy as np
from mpi4py import MPI

import tenferro as tf

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
status = 0

rng = np.random.default_rng(1)          # the same data on every rank
x = rng.standard_normal((512, 8))
y = np.sin(x @ (0.5 * rng.standard_normal((8, 1))))
params = {"w1": 0.3 * rng.standard_normal((8, 32)), "b1": np.zeros(32), "w2": 0.2 * rng.standard_normal((32, 1))}


def loss(p, xb, yb):
    d = tf.tanh(xb @ p["w1"] + p["b1"]) @ p["w2"] - yb
    return tf.mean(d * d)


step = tf.distributed.value_and_grad(comm, loss)
x_mine, y_mine = tf.distributed.shard(comm, x), tf.distributed.shard(comm, y)
opt = tf.optim.adam(tf.optim.cosine_decay(0.02, 300))
state = opt.init(params)
losses = []
for _ in range(300):
    value, grads = step(params, x_mine, y_mine)
    params, state = opt.step(params, grads, state)
    losses.append(float(value))
if rank == 0:
    print(f"data parallel over {comm.Get_size()} ranks: loss {losses[0]:.4f} -> {losses[-1]:.4f}")
if not losses[-1] < 0.5 * losses[0]:
    status = 1

xs = [0.4 * rng.standard_normal((8, 8, 2)) for _ in range(6)]
spec = "abx,bcy,cdz,dew,efv,fau->xyz"
z = tf.distributed.einsum(comm, spec, *xs, memory_limit=128)
one = np.asarray(tf.einsum(spec, *xs))
error = float(np.max(np.abs(np.asarray(z) - one) / (1 + np.abs(one))))
if rank == 0:
    print(f"sliced contraction over {comm.Get_size()} ranks: largest relative difference from one process {error:.2g}")
if not error <= 1e-12:
    status = 1
sys.exit(status)
