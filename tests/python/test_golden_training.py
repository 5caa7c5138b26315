"""Golden training runs: the same model, initial weights and batches trained for 10-25 steps in
Ember and in PyTorch with the same optimizer and LR scheduler; the loss trajectories must agree
(float32 throughout, as users train; |diff| <= 1e-3 * max(1, |loss|) at every step)."""
import numpy as np
import pytest

import ember

from parity import get_torch


def mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 3))


def cnn(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 8, 3, bias=False), nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(8, 4))


def recurrent(kind, **kw):
    def make(lib):
        nn = lib.nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = getattr(nn, kind)(6, 12, batch_first=True, **kw)
                self.head = nn.Linear(12 * (2 if kw.get("bidirectional") else 1), 3)

            def forward(self, x):
                out, _ = self.rnn(x)
                return self.head(out[:, -1])
        return Net()
    return make


def encoder(lib):
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = nn.Linear(6, 16)
            layer = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True)
            self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.head = nn.Linear(16, 3)

        def forward(self, x):
            return self.head(self.enc(self.inp(x)).mean(1))
    return Net()


def sgd(lib, p):
    return lib.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)


def adam(lib, p):
    return lib.optim.Adam(p, lr=1e-2)


def adamw(lib, p):
    return lib.optim.AdamW(p, lr=5e-3, weight_decay=0.05)


def rmsprop(lib, p):
    return lib.optim.RMSprop(p, lr=2e-3, momentum=0.5)


def step_lr(lib, o):
    return lib.optim.lr_scheduler.StepLR(o, step_size=4, gamma=0.5)


def cosine(lib, o):
    return lib.optim.lr_scheduler.CosineAnnealingLR(o, T_max=8)


CASES = {
    "mlp_sgd_nesterov_steplr": (mlp, (16, 10), 3, sgd, step_lr, 25),
    "cnn_batchnorm_adam_cosine": (cnn, (8, 3, 8, 8), 4, adam, cosine, 15),
    "bilstm2_adamw_steplr": (recurrent("LSTM", num_layers=2, bidirectional=True), (8, 7, 6), 3, adamw, step_lr, 15),
    "gru_rmsprop_cosine": (recurrent("GRU"), (8, 7, 6), 3, rmsprop, cosine, 15),
    "transformer_encoder_adam_steplr": (encoder, (8, 5, 6), 3, adam, step_lr, 12),
}


def train(lib, model, params_from, batches, opt_fn, sched_fn):
    if params_from is not None:
        model.load_state_dict(params_from)
    model.train()
    opt = opt_fn(lib, model.parameters())
    sched = sched_fn(lib, opt)
    losses = []
    for x, y in batches:
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(lib.from_numpy(x)), lib.from_numpy(y))
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.item()))
    return losses, model


@pytest.mark.parametrize("name", list(CASES))
def test_golden_training(name):
    torch = get_torch()
    make, xshape, classes, opt_fn, sched_fn, steps = CASES[name]
    rng = np.random.default_rng(len(name))
    # three batches, cycled; labels from a fixed linear teacher so that there is something to learn
    teacher = rng.standard_normal((int(np.prod(xshape[1:])), classes))
    xs = [rng.standard_normal(xshape).astype(np.float32) for _ in range(3)]
    data = [(x, (x.reshape(len(x), -1) @ teacher).argmax(1)) for x in xs]
    batches = [data[i % 3] for i in range(steps)]
    torch.manual_seed(0)
    tmodel = make(torch)
    init = {k: ember.from_numpy(v.detach().numpy().copy()) for k, v in tmodel.state_dict().items()}
    t_losses, tmodel = train(torch, tmodel, None, batches, opt_fn, sched_fn)
    e_losses, emodel = train(ember, make(ember), init, batches, opt_fn, sched_fn)
    t, e = np.array(t_losses), np.array(e_losses)
    assert np.all(np.abs(t - e) <= 1e-3 * np.maximum(1, np.abs(t))), list(zip(t_losses, e_losses))
    last = (steps - 1) // 3 * 3
    assert t[last] < t[0]  # it learned: the first batch's loss went down
    # the final BatchNorm running statistics agree, and with SGD the weights too (Adam-like
    # optimizers blow up rounding noise in gradients that are zero analytically, e.g. a conv bias
    # before BatchNorm or attention's key bias, so their weights are not compared)
    params = dict(tmodel.named_parameters())
    for (k, tv), (k2, ev) in zip(tmodel.state_dict().items(), emodel.state_dict().items()):
        assert k == k2
        if k not in params or opt_fn is sgd:
            np.testing.assert_allclose(ev.numpy(), tv.numpy(), rtol=1e-3, atol=1e-3, err_msg=k)
