"""torch.amp.GradScaler: dynamic loss scaling. scale() multiplies the loss so that small gradients
survive a 16-bit backward; unscale_() divides the gradients back and records whether any was inf or
NaN; step() skips the optimizer's step when one was; update() backs the scale off after an overflow
and grows it after growth_interval clean steps. The scale and the growth tracker are 0-d tensors,
updated in place by the two torch ops of the same names (_amp_foreach_non_finite_check_and_unscale_,
_amp_update_scale_)."""
import inspect
import warnings
from collections import abc, defaultdict
from enum import Enum

from .. import _C
from .._C import _ops, float16, float32, int32
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad

__all__ = ["OptState", "GradScaler"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


def _check_scalar_float(t, name, fn):
    if t.numel() != 1:
        raise RuntimeError(f"{fn}: {name} must be a 1-element tensor.")
    if t.dtype != float32:
        raise RuntimeError(f"{fn}: {name} must be a float tensor.")


def _amp_foreach_non_finite_check_and_unscale_(self, found_inf, inv_scale):
    """Multiplies every tensor of `self` by inv_scale in place; sets found_inf to 1.0 when any holds
    an inf or a NaN (the gradients are unscaled either way, as PyTorch's kernel does)."""
    fn = "_amp_foreach_non_finite_check_and_unscale_"
    _check_scalar_float(inv_scale, "inv_scale", fn)
    _check_scalar_float(found_inf, "found_inf", fn)
    with no_grad():
        # device ops only: on a GPU nothing here waits for the device (no item(), no bool())
        for t in self:
            if not t.is_floating_point():
                raise RuntimeError(f"{fn}: all tensors must be floating point, got {t.dtype}.")
            bad = _ops.logical_not(_ops.isfinite(t).all()).to(float32).reshape(found_inf.shape)
            found_inf.copy_(_ops.maximum(found_inf, bad))
            t.mul_(inv_scale.reshape(()))  # x * 1.0 is x exactly: no need to test the scale first


def _amp_update_scale_(self, growth_tracker, found_inf, scale_growth_factor, scale_backoff_factor, growth_interval):
    """Updates the scale in place: after an overflow it backs off and restarts the count of clean
    steps; after growth_interval clean steps it grows (unless that overflows float32). Returns it."""
    fn = "_amp_update_scale_"
    _check_scalar_float(self, "current_scale", fn)
    _check_scalar_float(found_inf, "found_inf", fn)
    if growth_tracker.numel() != 1 or growth_tracker.dtype != int32:
        raise RuntimeError(f"{fn}: growth_tracker must be a 1-element int tensor.")
    with no_grad():
        if found_inf.item():
            self.mul_(scale_backoff_factor)
            growth_tracker.fill_(0)
        else:
            successful = int(growth_tracker.item()) + 1
            if successful == growth_interval:
                grown = self * scale_growth_factor  # float32, as the scale
                if bool(_ops.isfinite(grown).all()):
                    self.copy_(grown)
                growth_tracker.fill_(0)
            else:
                growth_tracker.fill_(successful)
    return self


class _MultiDeviceReplicator:
    """A tensor and its copies on other devices, made on first request."""

    def __init__(self, master_tensor):
        self.master = master_tensor
        self._per_device_tensors = {}

    def get(self, device):
        retval = self._per_device_tensors.get(device)
        if retval is None:
            retval = self.master.to(device=device, copy=True)
            self._per_device_tensors[device] = retval
        return retval


class GradScaler:
    """GradScaler(device='cuda', init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5,
    growth_interval=2000, enabled=True). Without a GPU, as on a CPU-only PyTorch, the 'cuda' scaler
    disables itself with a warning; GradScaler('cpu') scales."""

    def __init__(self, device="cuda", init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if self._device == "cuda" and enabled and not _C._cuda_is_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev):
        self._scale = _ops.full((), self._init_scale, dtype=float32, device=dev)
        self._growth_tracker = _ops.full((), self._init_growth_tracker, dtype=int32, device=dev)

    def scale(self, outputs):
        """Multiplies a tensor, or each tensor of a (nested) list or tuple, by the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device)
        stash = []

        def apply_scale(val):
            if isinstance(val, Tensor):
                if not stash:
                    if self._scale is None:
                        self._lazy_init_scale_growth_tracker(val.device)
                    stash.append(_MultiDeviceReplicator(self._scale))
                return val * stash[0].get(val.device)
            if isinstance(val, abc.Iterable):
                scaled = map(apply_scale, val)
                return type(val)(scaled) if isinstance(val, (list, tuple)) else scaled
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        per_device_inv_scale = _MultiDeviceReplicator(inv_scale)
        per_device_found_inf = _MultiDeviceReplicator(found_inf)
        grads_by_device_dtype = defaultdict(lambda: defaultdict(list))
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not isinstance(param, Tensor):
                        raise AssertionError(f"expected param to be torch.Tensor, got {type(param).__name__}")
                    if param.grad is None:
                        continue
                    if not allow_fp16 and param.grad.dtype == float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    to_unscale = param.grad
                    if to_unscale.is_sparse:
                        # a sparse gradient (embedding(sparse=True)) is unscaled through its values;
                        # float16 duplicates are summed first, so the sum cannot overflow unseen
                        if to_unscale.dtype == float16:
                            param.grad = to_unscale = to_unscale.coalesce()
                        to_unscale = to_unscale._values()
                    grads_by_device_dtype[to_unscale.device][to_unscale.dtype].append(to_unscale)
            for device, per_dtype in grads_by_device_dtype.items():
                for grads in per_dtype.values():
                    _amp_foreach_non_finite_check_and_unscale_(grads, per_device_found_inf.get(device),
                                                               per_device_inv_scale.get(device))
        return per_device_found_inf._per_device_tensors

    def unscale_(self, optimizer):
        """Divides the optimizer's gradients by the scale (once per step), recording inf/NaN."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # the reciprocal in float64, then float32, as PyTorch computes it
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = _ops.full((), 0.0, dtype=float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer, optimizer_state, *args, **kwargs):
        if not sum(v.item() for v in optimizer_state["found_inf_per_device"].values()):
            return optimizer.step(*args, **kwargs)
        return None

    def step(self, optimizer, *args, **kwargs):
        """Unscales (unless unscale_ ran) and calls optimizer.step(), skipped after an inf/NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if getattr(optimizer, "_step_supports_amp_scaling", False):
            return self._step_amp_aware(optimizer, state, *args, **kwargs)
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, state, *args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def _step_amp_aware(self, optimizer, state, *args, **kwargs):
        # an optimizer that unscales and skips by itself reads grad_scale and found_inf
        has_grad_scaler_kwarg = "grad_scaler" in inspect.signature(optimizer.step).parameters
        if has_grad_scaler_kwarg:
            warnings.warn("GradScaler is going to stop passing itself as a keyword argument to the passed "
                          "optimizer. In the near future GradScaler registers `grad_scale: Tensor` and "
                          "`found_inf: Tensor` to the passed optimizer and let the optimizer use them directly.",
                          FutureWarning, stacklevel=3)
            kwargs["grad_scaler"] = self
        else:
            if state["stage"] is OptState.READY:
                self._check_inf_per_device(optimizer)
            scaler = self._scale
            found_inf = sum(t.to(scaler.device) for t in state["found_inf_per_device"].values())
            optimizer.grad_scale = (getattr(optimizer, "grad_scale", None) if state["stage"] == OptState.UNSCALED
                                    else scaler * getattr(optimizer, "grad_scale", 1))
            optimizer.found_inf = found_inf
        retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        if not has_grad_scaler_kwarg:
            del optimizer.grad_scale
            del optimizer.found_inf
        return retval

    def update(self, new_scale=None):
        """Sets the scale for the next iteration: new_scale if given, else backoff/growth."""
        if not self._enabled:
            return
        _scale, _growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if not isinstance(new_scale, Tensor) or new_scale.device.type != self._device:
                    raise AssertionError(reason)
                if new_scale.numel() != 1 or new_scale.requires_grad is True:
                    raise AssertionError(reason)
                self._scale.copy_(new_scale.reshape(()))
        else:
            found_infs = [found_inf.to(device=_scale.device) for state in self._per_optimizer_states.values()
                          for found_inf in state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            found_inf_combined = found_infs[0]
            for extra in found_infs[1:]:
                found_inf_combined += extra
            _amp_update_scale_(_scale, _growth_tracker, found_inf_combined, self._growth_factor,
                               self._backoff_factor, self._growth_interval)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _get_scale_async(self):
        return self._scale

    def get_scale(self):
        if self._enabled:
            return self._init_scale if self._scale is None else self._scale.item()
        return 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if self._enabled:
            return self._init_growth_tracker if self._growth_tracker is None else int(self._growth_tracker.item())
        return 0

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        """scale, growth_factor, backoff_factor, growth_interval and _growth_tracker ({} if disabled)."""
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning of an iteration, "
                                     "or at the end after scaler.update().")
            # the tensors are rebuilt lazily from these numbers
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    def _check_inf_per_device(self, optimizer):
        _scale, _ = self._check_scale_growth_tracker("_check_inf_per_device")
        dummy_inv_scale = _ops.full((), 1.0, dtype=float32, device=_scale.device)
        found_inf = _ops.full((), 0.0, dtype=float32, device=_scale.device)
        self._per_optimizer_states[id(optimizer)]["found_inf_per_device"] = self._unscale_grads_(
            optimizer, dummy_inv_scale, found_inf, True)
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

    def _found_inf_per_device(self, optimizer):
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]
