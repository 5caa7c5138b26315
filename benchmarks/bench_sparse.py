"""Sparse gradients: a training step of an embedding table with sparse=True (forward, backward into a
sparse COO gradient, optimizer step on the rows it names), Ember vs PyTorch in one process,
interleaved rounds, medians. Also coalesce and to_dense of a large uncoalesced gradient.

    PYTHONPATH=python python3 benchmarks/bench_sparse.py [--threads N]
"""
from common import compare, print_table, threads_and_libraries


def main():
    args, libs = threads_and_libraries()
    rows, dim, batch = 100_000, 64, 4096

    def setup(lib, optname, sparse=True):
        lib.manual_seed(0)
        emb = lib.nn.Embedding(rows, dim, sparse=sparse)
        opt = getattr(lib.optim, optname)(emb.parameters(), lr=0.01)
        idx = lib.randint(0, rows, (batch,))

        def step():
            opt.zero_grad()
            emb(idx).pow(2).sum().backward()
            opt.step()
        return step

    cases = []
    for optname in ("SparseAdam", "SGD", "Adagrad"):
        cases.append((f"Embedding({rows}, {dim}, sparse=True) step, {optname}, batch {batch}",
                      {name: setup(lib, optname) for name, lib in libs.items()}))
    cases.append((f"the same with a dense gradient, Adam (for scale)",
                  {name: setup(lib, "Adam", sparse=False) for name, lib in libs.items()}))

    def grad_of(lib):
        lib.manual_seed(0)
        w = lib.zeros(rows, dim, requires_grad=True)
        lib.nn.functional.embedding(lib.randint(0, rows, (8 * batch,)), w, sparse=True).sum().backward()
        return w.grad

    grads = {name: grad_of(lib) for name, lib in libs.items()}
    cases.append((f"coalesce of {8 * batch} rows", {name: (lambda g=grads[name]: g.coalesce()) for name in libs}))
    cases.append(("to_dense of the same", {name: (lambda g=grads[name]: g.to_dense()) for name in libs}))
    print_table(f"Sparse gradients, {args.threads} thread(s)", compare(cases))


if __name__ == "__main__":
    main()
