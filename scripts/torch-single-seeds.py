"""The 3000-step test accuracy of the PyTorch reference run (torch_single.py, kept outside this
repository in PEERS) for several seeds, to set issue 17's accuracy comparison beside the spread a
seed gives: seed S starts the model from torch.manual_seed(S) and draws batches from
Generator(100 + S), so seed 0 is torch_single.py's own run. One thread, as the reference.

    OMP_NUM_THREADS=1 /usr/bin/python3 scripts/torch-single-seeds.py PEERS 0 1 2 3
"""
import sys

sys.path.insert(0, sys.argv[1])
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import peers_common as pc  # noqa: E402

pc.pin_threads(1)
xtr, ytr = pc.load('mnist', 'train')
xte, yte = pc.load('mnist', 'test')
for seed in (int(s) for s in sys.argv[2:]):
    model = pc.make_model('mnist', seed=seed)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    data = pc.Batches(xtr, ytr, 64, seed=100 + seed)
    for _ in range(3000):
        xb, yb = data.next()
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(xb), yb).backward()
        opt.step()
    print(f"seed {seed}: test accuracy {pc.accuracy(model, xte, yte):.4f}", flush=True)
