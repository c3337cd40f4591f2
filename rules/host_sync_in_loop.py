"""TL002 host-sync-in-loop."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import libcst as cst

from torchlint.analysis.accumulation import Backprop
from torchlint.analysis.availability import runs_without_cuda
from torchlint.analysis.entry_points import EntryPoints
from torchlint.analysis.evaluation import Evaluation
from torchlint.analysis.grad import Grad
from torchlint.analysis.host_io import HostWrites, WaitsByDesign
from torchlint.analysis.loops import LoopFacts, may_run_elsewhere_text
from torchlint.analysis.model import Binding, BindingKind, SemanticModel, passed_argument
from torchlint.analysis.names import name_tokens
from torchlint.analysis.nodes import find_all, own_returns
from torchlint.analysis.provenance import NumpyProvenance
from torchlint.analysis.symbols import dotted
from torchlint.analysis.tensors import Kind, TensorFacts
from torchlint.analysis.text import may_have_batch_loops, may_sync_per_step, may_train
from torchlint.diagnostics import Applicability, Edit, Fix, FixAvailability
from torchlint.rule import Invalid, Rule, Valid

if TYPE_CHECKING:
    from pathlib import Path

    from torchlint.analysis.project_index import ProjectIndex

_METHODS = ("item", "cpu", "numpy", "tolist")
_ARRAY_COPIES = frozenset({"cpu", "numpy", "tolist"})  # copies of whole tensors, not one number
# Reductions of a whole tensor to one number (no dim given): `x.sum().cpu()` copies a scalar.
_WHOLE_REDUCTIONS = frozenset({"sum", "mean", "max", "min", "norm", "prod", "std", "var"})
_CONVERSIONS = ("float", "int", "bool")
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)
_STRINGS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
# Owners whose `.step()` takes no data: an optimizer's update. Any other `.step(value)` consumes
# the value on the host (an environment's action, a plateau scheduler's metric).
_UPDATE_OWNERS = frozenset({"optimizer", "optimizers", "optim", "opt", "scaler", "solver"})
_COLLECTIVES = (
    "all_reduce",
    "all_gather",
    "all_gather_into_tensor",
    "broadcast",
    "reduce",
    "reduce_scatter",
    "all_to_all",
)
# What a decoding helper's name says it turns into text.
_TOKEN_WORDS = frozenset(
    {"sequence", "sequences", "seq", "seqs", "tokens", "ids", "caption", "text"}
)
_BACKEND = re.compile(r"(\b|_)(mps|xla|tpu|cpu)(\b|_)|Device(CPU|MPS|TPU)", re.IGNORECASE)
_LOGGING_CALLS = (
    "print",
    "set_postfix",
    "set_description",
    "info",
    "debug",
    "warning",
    "log",
    "add_scalar",
    "write",
)


def _logged_values(call: cst.Call) -> list[cst.BaseExpression]:
    """The values `add_scalar(tag, value)` / `add_scalars(tag, {name: value})` write."""
    many = call.func.attr.value == "add_scalars"  # type: ignore[attr-defined]
    value = passed_argument(call, "tag_scalar_dict" if many else "scalar_value", 1)
    if isinstance(value, cst.Dict):
        return [e.value for e in value.elements if isinstance(e, cst.DictElement)]
    return [] if value is None else [value]


@dataclass(frozen=True)
class _Candidate:
    kind: str  # "method", "conversion", "condition", "format", "logged", "callee", "state", "bound"
    node: cst.CSTNode  # the node reported
    value: cst.BaseExpression  # the tensor the sync reads


# A Python container's collecting methods, with how many positional arguments each takes.
_CONTAINER_METHODS = {"append": 1, "extend": 1, "insert": 2, "add": 1, "setdefault": 2}
_CONTAINER_BUILDERS = frozenset({"list", "dict", "set", "defaultdict", "OrderedDict", "deque"})


def _container_call(call: cst.Call) -> bool:
    """`scores.append(out.cpu())`: a call that may be a Python container's own collecting
    method; not `self.pesq_metric.append(ids=ids, predict=pred.cpu(), target=ref.cpu())`,
    whose keywords or extra arguments no list or set takes (a metric-stats object's method)."""
    func = call.func
    taken = _CONTAINER_METHODS.get(func.attr.value) if isinstance(func, cst.Attribute) else None
    return (
        taken is not None
        and len(call.args) <= taken
        and all(arg.keyword is None and not arg.star for arg in call.args)
    )


def _builds_container(value: cst.BaseExpression | None) -> bool:
    """`[]`, `{}`, `[x for ...]`, `dict()`, `defaultdict(list)`: a Python container."""
    if isinstance(value, cst.List | cst.Dict | cst.Set | cst.ListComp | cst.DictComp):
        return True
    return (
        isinstance(value, cst.Call)
        and (dotted(value.func) or "").rsplit(".", 1)[-1] in _CONTAINER_BUILDERS
    )


def _short(code: str) -> str:
    code = " ".join(code.split())
    return code if len(code) <= 40 else code[:37] + "..."


class HostSyncInLoop(Rule):
    code = "TL002"
    name = "host-sync-in-loop"
    summary = "A host-device sync (`.item()`, `.cpu()`, `if tensor:`, ...) runs on every batch"
    fix_availability = FixAvailability.UNSAFE
    fix_versions = {
        "`.detach()` and a conversion where read": "1.0",
    }
    # A file that never names a device puts nothing on an accelerator, and then syncs cost nothing;
    # it looks only in per-batch loops.
    tokens = ()
    text_tests = (may_sync_per_step,)
    docs = """
## What it does
Flags host-device synchronisations that run on every iteration of a per-batch training or
evaluation loop:

- `.item()`, `.cpu()`, `.numpy()` and `.tolist()` of a tensor;
- `float(t)`, `int(t)` and `bool(t)` of a tensor;
- a tensor used as a condition: `if t:`, `while t:`, `x if t else y`, and each element of
  `any(...)`/`all(...)` over a comprehension (`any(not torch.isfinite(p.grad).all() for p in
  params)` syncs once per parameter);
- a device tensor used as a slice bound inside an inner loop or comprehension
  (`[values[i, : ends[i]] for i in range(n)]`): Python reads each bound on the host
  (`__index__`), one sync per element; a bound read once per batch is a shape the host needs;
- printing a tensor, or formatting it into text (f-strings, `%`, `str.format`);
- passing a tensor to a function or method of another module of the project that reads its
  arguments on the host (`meter.update(loss=loss)` where `Meter.update` calls `v.item()`, or
  turns each value of a dict it is given into a number with `float(v)`; `grad_norm(params)`
  returning `math.sqrt` of a sum accumulated from them): the project index summarises each
  file's functions with `ast`;
- calling a method of another module's class that returns a host read of the instance's own
  buffer or parameter (`model.get_step()` where `get_step` returns `self.step.data.item()` of a
  registered buffer), which lives on the module's device;
- logging a tensor with TensorBoard's `add_scalar(tag, t)` / `add_scalars(tag, {...: t})`, which
  copies it to the host to write it.

A per-batch loop is a loop over a DataLoader (built in the file, or a name such as
`train_loader`, `loader`, `dataloader`, `batches`, or one split of a collection of loaders,
`self.data_loader["train"]`, `loaders[phase]`; through `enumerate`/`zip`/`tqdm` or any call
that takes the loader first, such as `meter.log_every(loader, 20)`, or a loader's own iteration
method, `data_iterator.iterate_ds_data()`; a parameter that every call in the file passes a
loader), a loop over a generator told a batch size (`minibatch(users, batch_size=bs)`), a loop
whose body fetches a batch (`x, y = get_batch(split)`, `next(data_iter)`, also handed straight
on, `outs.append(self.validation_step(next(val_loader)))`), or a loop whose own body runs
`backward()` or an optimizer step. Code in a
function called from such a loop in the same file counts too, including a module's `forward`
(`model(x)` runs the `forward` of the file's class `model` was built from, `meter.update(...)` the
method of the file's class `meter` was built from) and a closure passed to
`optimizer.step(closure)`. Code a training framework runs every step is per-batch too
(`analysis/frameworks.py`: Lightning's `training_step`, a Hugging Face `Trainer`'s
`compute_loss`, fairseq's `train_step`, mmengine's `after_train_iter`, detectron2's
`run_step`/`after_step`, ignite's `Engine(step)` and `Events.ITERATION_*` handlers), and so is
an evaluation hook it runs on every evaluation batch (Lightning's `validation_step`, mmengine's
`after_val_iter`, speechbrain's `evaluate_batch`: an evaluation loop nobody wrote), and such a
framework puts batches on the accelerator itself unless told `accelerator="cpu"`. So is what the
project's other modules run every step: a helper a training loop calls (`clip_grad_value_` with
a per-parameter `.item()`), a subclass's `train_step` that a base class's loop calls, the
`forward` of a loss module that a training step calls, and a function that steps the optimizer
in its own body which nothing in its file calls (`optimize_parameters` of a model a registry
builds), or through a function of its file that does (an agent's `update()` that calls
`update_critic()` and `update_actor()`), or through what a `self.` attribute holds, of a
project class whose `__call__` or `step` runs `backward()` and the optimizer's step itself
(`self._model_opt(loss, params)` with dreamerv3's `tools.Optimizer`): a training step,
whoever runs it. A file that names no device runs such code on the
device of the modules that call it, when the project names CUDA. A loop around another per-batch loop (over epochs, files or
shards) does not. TL101, TL102 and TL103 read per-batch loops and device moves from the same
facts.

Not flagged:
- code under a periodic guard (`if step % log_every == 0:`, `if (i + 1) % k == 0 and ...:`,
  `if step % every == 0 or step >= total:` where the loop also leaves at `step >= total`,
  `if self.control.should_log:`, an earlier `if step % n: continue`, a helper of the project
  that answers with a modulo test, `if every_n_steps(state, freq):` or an inherited
  `if self._is_log_step():`, and a helper from outside the project named for it,
  `if should_log(step):`; but not a guard whose
  branch steps the optimizer, `if (step + 1) % accum_steps == 0: ...; optimizer.step()`: that is
  gradient accumulation, and its branch runs with every update), once-only code
  (`if i == 0:`, also on the batch index a framework hands its hook, `if batch_idx == 0:`
  in `training_step(self, batch, batch_idx)`, or in a helper the hook passes it to), the
  first few iterations (`if idx < 3:`, `if idx < hp.log.num_audio:`, a configured count of
  samples to show, and what follows `if batch_idx > 0: return` on such a batch index), iterations listed in a collection (`if i in checkpoints:`) and except handlers;
  rare paths: `if sample is None:` on a value the loop binds (an empty shard), `if len(state)
  == 0:` and `if preds is None: preds = ...` on a name bound to None once before the loop
  and never set back to None inside it (lazy initialisation: the arm runs on the first batch,
  its `else` arm every batch and is flagged), branches that end the program or raise (`print(loss.item());
  sys.exit(1)`; the test itself is a finding unless the host needs its value, below), and a test behind a flag the loop
  latches (`if use_queue or not torch.all(q == 0): use_queue = True` tests the queue only
  until it is full);
- code after the loop, per-epoch loops (`for epoch in range(...)`), loops whose body
  always ends in `break` (a look at the first batch), loops over a literal count of at most
  ten that step no optimizer (`for sample in range(5):` printing a few samples after
  training: a handful of reads per run, not one per batch), and the rest of a helper that
  leaves early on most calls (`if steps % every != 0: return`, also nested as
  `if steps == 0: ... else: if steps % every != 0: return`, where `steps` is a parameter
  every call of the file, if any, passes a counter for: a sample-image generator the
  training loop calls every step);
- an end-of-sequence test that breaks out of a sampling or decoding loop inside the step
  (`if (out == eos).all(): break`): the host needs it to stop;
- values that are not tensors (Python numbers, numpy values, results of `.item()`, plain bool
  attributes such as `x.is_cuda` or `x.is_xpu`), `.numpy()` (which raises on a device tensor,
  so its receiver is on the CPU already; `numpy(force=True)` copies and is flagged), tensors
  known to be on the CPU (`.cpu()` results, kept there by in-place updates and element stores, DataLoader batches never moved to a device and
  what a model computes from them; batches of a dataset class of the file that moves each
  sample to the device itself are on the device), and conversions guarded by a type test
  (`if torch.is_tensor(lr): lr = lr.item()`), and samples read straight from a dataset
  (`dataset.get(i).tolist()`, `dataset[i]`, where `dataset` is built by a call handed no
  device tensor and not of a class of the file that moves its samples to the device);
- reads that are the point of the code: `assert`s and `self.assert*` checks, unit tests (test
  code is left alone by every performance rule; `def test(model, loader)` in a training script is
  an evaluation routine, not a test), values just agreed across ranks with a collective and
  branched on (`all_reduce(done); if done.item(): break`; an all-reduced loss that is logged
  is still a device tensor and is flagged), branches for one backend
  (`if isinstance(device, DeviceMPS):`) or paths that run only off CUDA (the `else` of
  `if x.is_cuda:`, of `if x.device.type in ["cuda", "npu"]:` or of
  `if torch.cuda.is_available():`: a library's loop-heavy CPU branch), and values handed to a `.step(...)` that is not an
  optimizer's (`env.step(policy(obs).argmax().item())`: an environment acts on the host), and
  copies written straight to a file (`save_image(out.cpu(), path)`, `np.save(f, x.numpy())`,
  `json.dump(results, f)`);
- values the host needs where they go (`analysis/host_io.py`: the read's value is followed
  through names, arithmetic, comparisons, containers, unpacking and the file's functions, and
  every use has to end where only the host can take it): token ids decoded to text
  (`tokenizer.decode(ids.tolist())`, `batch_decode`), priorities written into a replay
  buffer (`memory.update_priorities(idx, td.abs().cpu().numpy())`), a test whose branch
  leaves the loop or the program (`if not torch.isfinite(loss): raise ...`, `if
  loss.item() < target: break`, a `return` out of the loop; not a `continue`, not a `return`
  that picks a step function's path, not a `while` test re-read every iteration), and, in
  evaluation (grad off, a loop over validation data, also through `bar = tqdm(val_loader)`,
  or anywhere in a script that loads weights and never trains), whole
  predictions or targets copied for a metric the host computes over the set (a numpy,
  scikit-learn, scikit-image, pycocotools or pandas call other than a plain mean or sum, or a
  list later handed to one, also as a column of a table, joined with `torch.cat` or written to a file,
  or returned whole with numpy copies in it, `return metrics, per_batch`, or kept on the
  object, `self.preds.append(p.cpu().numpy())`, for a method of the class that hands the list
  to such a call (an epoch-end hook), or returned by a framework's evaluation hook, which keeps
  each batch's outputs for the epoch's end or reads them on the host itself (speechbrain
  averages the loss its `evaluate_batch` returns with `float(loss)`), or handed to a method
  of an object the file does not define that no list has, `self.pesq_metric.append(ids=ids,
  predict=pred.cpu(), target=clean.cpu())`,
  or handed to an evaluator's method the file does not define, `evaluator.eval({"y_pred":
  torch.cat(preds)})`, or made a numpy array for a function or object of another module
  that computes with numpy on what it is passed, `running_metrics.update(gt, pred)` counting
  a confusion matrix with `np.bincount`, not an average meter's `update` whose sums could stay
  on the device; not when a training loop runs the copy, even through a no_grad
  helper), figures matplotlib
  draws, and ids a project helper named for decoding (`decode_sequence(vocab, seq)`) turns
  into text in evaluation. One use is enough on its own when it is a size: a buffer's shape
  (`max(sizes)` -> `torch.empty((n,))`), a slice bound, a `range` count. One element of a
  tensor read as a number per iteration of an inner loop (`int(counts[b])`) is still
  flagged, whatever it is for: one read of the whole tensor before that loop would do; an
  element or chunk copied as an array (`images[i].cpu()` saved as a PNG, each rendered
  chunk's `depth[0].cpu()` joined and written) is a host product like a whole batch; so is
  an array a helper hands back, also in a returned tuple, that the loop writes into a numpy
  buffer it allocated (`y0, s0 = _forward(net, tile)`, then `out[bslc] = y0`), and, in
  evaluation, each batch's copy collected in a dict of lists that the function returns as
  numpy arrays (`return {k: np.stack(v) for k, v in found.items()}`);
- other reads in a loop that hands an action to an environment (`env.step(a.cpu().numpy())`)
  every step, or in an evaluation loop (one that trains nothing, or a framework's evaluation
  hook) that decodes autoregressively, also through a function of the file
  (`model.generate(**inputs, max_new_tokens=64)`: a `generate` told how to decode, which
  checks after every token whether the sequences have ended): the loop already waits for the
  device there by design, hundreds of times a step for decoding. So does an iteration
  that calls a helper of the file that returns host copies (`return t.detach().cpu()`,
  itself not flagged), for the reads before that call in the same function that run
  whenever it does (not a read outside the `if` a plotted example's copy sits in), and an
  iteration that picks which of two updates to run from a device value (`if
  self.count.item() == 1: ...; opt.step()` `else: ...; adv_opt.step()`, itself flagged),
  for every other read: such reads only move a wait the iteration has anyway. Reads beside a
  `torch.cuda.synchronize()` are still flagged, timed or not (a read mid-step adds a wait
  before the update is queued), and so are reads repeated per element in an inner loop;
- a read that follows such a read in the same block, with nothing between that may queue
  device work (logging, builtins, numpy), of the same tensor or another one computed before it
  (`a = action.item()` for `env.step(a)`, then `history.append(action.tolist())`; `labels.cpu()`
  right after `logits.cpu()` for a host metric; `history.append(norm.item())` right after `if
  torch.isnan(norm): raise ...`): the first read drained the queue. A read that computes on the
  device itself (`loss.mean().item()`) still waits. After a read that is itself flagged (a
  logged value), the next is flagged too: each is a line to move under the same periodic guard,
  and once the first is fixed the next is the step's wait. So are the per-element reads
  of the same tensor in an inner loop that follows such a read (`crop = int(lengths.min().item())`,
  then `for b in range(len(lengths)): n = int(lengths[b].item())` for a random crop offset),
  where the loop queues no device computation (views, list appends, numpy, copies of host
  data to the device);
- files that never put anything on an accelerator (no `.cuda()`, no `.to(device)` or
  `device=` that can be a GPU, no `"cuda"` device string; a `device` bound only to
  `torch.device("cpu")` is the CPU): there a sync costs nothing.

## Why is this bad?
CUDA work is queued asynchronously: the Python loop runs ahead of the GPU, preparing the next
batch while earlier kernels still execute. Reading a tensor's value on the host makes the
CPU wait until every queued kernel has finished and the value is copied back. Done once per
batch, this drains the queue every step: the GPU idles while Python launches the next step's
kernels, and the data loader's prefetching no longer hides behind computation. The cost grows
with the number of steps and is largest for small, fast models.

## When not to act
Act on reads whose value could stay on the device: a training loss added to a running sum or
handed to a logger every step, per-batch training metrics (even ones computed in numpy), one
`.item()` per element, and truth tests, f-strings and `float()` of device tensors on every
step; a branch that only skips the batch (`if torch.isnan(loss).any(): continue`) or picks a
value (`if loss > best:`) can be decided on the device too, and a mean or sum of per-batch
values can be accumulated there. Leave alone reads whose value the host needs at that step,
which the rule does not flag where it can follow the value: evaluation predictions and targets
collected for COCO, scikit-learn or numpy metrics over the whole set, ids decoded
to text, replay priorities written into a host buffer, sizes gathered across ranks that set a
buffer's shape, actions sent to an environment, and control flow the loop needs now (a NaN
abort, an early stop). Where a loop already waits on the device every step by design (an RL
collector stepping its environment, a helper that returns host copies), one more read
there costs next to nothing. Where the rule
cannot follow the value (it goes to another module, or to a container read in many places), it
may still flag such a read: suppress it with `# noqa: TL002` and a word on why.

## Example
```python
running_loss = 0.0
for inputs, labels in train_loader:
    optimizer.zero_grad()
    loss = criterion(model(inputs.to(device)), labels.to(device))
    loss.backward()
    optimizer.step()
    running_loss += loss.item()
print(running_loss / len(train_loader))
```

## Use instead
```python
running_loss = 0.0
for inputs, labels in train_loader:
    optimizer.zero_grad()
    loss = criterion(model(inputs.to(device)), labels.to(device))
    loss.backward()
    optimizer.step()
    running_loss += loss.detach()
print(float(running_loss) / len(train_loader))
```
Values that are logged every step can be logged every N steps instead
(`if step % log_every == 0: print(loss.item())`); predictions collected for metrics can stay
on the device (`preds.append(out.argmax(1))`) and move once after the loop
(`torch.cat(preds).cpu()`).

## Fix safety
Only `total += loss.item()` (or `float(loss)`, possibly scaled, as in
`total += loss.item() * x.size(0)`) has a fix, and it is unsafe. It adds
`loss.detach()` on the device instead (for counts such as `(pred == y).sum()`, the count
itself, which has no autograd history) and wraps every read of `total` in `float(...)` (in
`int(...)` for counts), so the value read keeps its Python type.
Behaviour can still change:

- the sum is kept in the tensor's dtype (float32, or float16/bfloat16 for a half-precision
  loss) instead of Python's float64, so the result can differ in its last digits, and long
  sums of half-precision values lose precision;
- an error in the device work (a NaN check, a device-side assert) surfaces where `total` is
  read, not at the batch that caused it;
- while the loop runs, `total` is a device tensor, not a number.

The fix is offered only when `total` is a local name initialised with a number literal, only
ever updated with `+=`/`-=`, not used by nested functions, and read only outside the
per-batch loop or under a periodic guard; otherwise each read would sync again, and the
finding carries a display-only hint instead. Every other finding is display-only: the right
rewrite (log every N steps, collect on the device, decide on the device with `torch.where`)
depends on what the value is for.

## References
- [torch.Tensor.item](https://pytorch.org/docs/stable/generated/torch.Tensor.item.html)
- [torch.cuda.set_sync_debug_mode](https://pytorch.org/docs/stable/generated/torch.cuda.set_sync_debug_mode.html): makes PyTorch warn or raise on synchronizing operations, to find them at run time
- [CUDA semantics: asynchronous execution](https://pytorch.org/docs/stable/notes/cuda.html#asynchronous-execution)
- [PyTorch Performance Tuning Guide: avoid unnecessary CPU-GPU synchronization](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#avoid-unnecessary-cpu-gpu-synchronization)
- [Faster Deep Learning Training with PyTorch (L. Kuhn): beware of frequently transferring data between CPUs and GPUs](https://efficientdl.com/faster-deep-learning-in-pytorch-a-guide/)
"""
    valid = [
        # a loop that always breaks after its first batch: a peek, not a per-batch loop
        Valid(
            """
            import torch
            for xb, yb in val_loader:
                pred = model(xb.cuda())['out'].cpu()
                print(pred.shape)
                break
            """
        ),
        # a device variable that is the CPU in every binding: nothing to wait for
        Valid(
            """
            import torch
            device = torch.device('cpu')
            for x, y in train_loader:
                loss = model(x.to(device)).sum()
                loss.backward()
                print(loss.item())
            """
        ),
        # an RL action: the environment steps on the host, so it needs the value every step
        Valid(
            """
            import torch
            for t in range(steps):
                action = policy(obs.to(device)).argmax().item()
                obs, reward, done, info = env.step(action)
                loss = policy.loss(obs.to(device))
                loss.backward()
                optimizer.step()
            """
        ),
        Valid(
            """
            import torch
            for x, y in train_loader:
                loss = model(x.cuda()).sum()
                loss.backward()
                optimizer.step()
                obs, r, done, _ = env.step(policy(obs.cuda()).argmax().item())
            """
        ),
        # written to a file: the data has to reach the host
        Valid(
            """
            import torch
            for i, (x, c) in enumerate(test_loader):
                out = G(x.cuda(), c.cuda())
                save_image(denorm(out.data.cpu()), f'{i}.jpg')
            """
        ),
        # only on the listed iterations: `i in checkpoints`
        Valid(
            """
            import torch
            for i in range(1000):
                loss = model(x.cuda()).sum()
                loss.backward()
                opt.step()
                if i in np.linspace(0, 1000, 10):
                    print(loss.item())
            """
        ),
        # Per-epoch loop, not per batch.
        Valid(
            """
            import torch
            device = torch.device('cuda')
            for epoch in range(10):
                loss = train_one_epoch(model, loader)
                print(loss.item())
            """
        ),
        # Under a periodic guard.
        Valid(
            """
                import torch
                model = model.cuda()
                for step, (x, y) in enumerate(train_loader):
                    loss = criterion(model(x.cuda()), y.cuda())
                    loss.backward()
                    optimizer.step()
                    if step % 100 == 0:
                        print(loss.item())
                """
        ),
        Valid(
            """
                import torch
                model.to(device)
                for i, batch in enumerate(loader):
                    loss = model(batch)
                    loss.backward()
                    if (i + 1) % args.log_every == 0 and is_main:
                        print(f'loss {loss}')
                """
        ),
        Valid(
            """
                import torch
                model.to(device)
                for i, batch in enumerate(loader):
                    loss = model(batch)
                    loss.backward()
                    if i % 10:
                        continue
                    print(loss.item())
                """
        ),
        # After the loop.
        Valid(
            """
                import torch
                model.cuda()
                total = torch.zeros((), device='cuda')
                for x, y in train_loader:
                    loss = criterion(model(x.cuda()), y.cuda())
                    loss.backward()
                    total += loss.detach()
                print(total.item())
                """
        ),
        # Not a tensor.
        Valid(
            """
                import torch
                import numpy as np
                model.cuda()
                for x, y in train_loader:
                    loss = criterion(model(x.cuda()), y.cuda())
                    loss.backward()
                    scores = np.array(x.shape)
                    print(scores.tolist(), float(len(y)))
                """
        ),
        # A DataLoader batch that stays on the CPU.
        Valid(
            """
                import torch
                model.cuda()
                for x, y in train_loader:
                    out = model(x.cuda())
                    counts = y.tolist()
                """
        ),
        # The file never uses an accelerator.
        Valid(
            """
            import torch
            for x, y in train_loader:
                loss = criterion(model(x), y)
                loss.backward()
                print(loss.item())
            """
        ),
        # Not a per-batch loop.
        Valid(
            """
            import torch
            model.cuda()
            for name, p in model.named_parameters():
                print(name, p.norm().item())
            """
        ),
        # Once-only and exceptional paths.
        Valid(
            """
                import torch
                model.cuda()
                for i, (x, y) in enumerate(loader):
                    loss = criterion(model(x.cuda()), y.cuda())
                    if i == 0:
                        print(loss.item())
                    try:
                        loss.backward()
                    except RuntimeError:
                        print(loss.item())
                """
        ),
        # Flags set by a logging schedule, tests, values agreed across ranks, backend workarounds.
        Valid(
            """
                import torch
                import torch.distributed as dist
                model.cuda()
                def test_training():
                    for x, y in loader:
                        loss = model(x.cuda()).sum()
                        loss.backward()
                        assert loss.item() > 0
                def train():
                    for x, y in loader:
                        loss = model(x.cuda()).sum()
                        loss.backward()
                        if control.should_log:
                            print(loss.item())
                        done = torch.zeros(1, device='cuda')
                        dist.all_reduce(done)
                        if done.item():
                            break
                        if x.device.type == 'mps':
                            loss = loss.cpu()
                """
        ),
        Valid(
            """
            import numpy as np
            for batch in loader:
                x = np.asarray(batch)
                print(float(x.sum()))
            """
        ),
        # the else branch of `if i != len(loader) - 1:` runs on the last batch only, through tqdm(enumerate(...))
        Valid(
            """
            import torch
            from tqdm import tqdm
            model.cuda()
            loop = tqdm(enumerate(train_loader))
            for i, (x, y) in loop:
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                if i != len(train_loader) - 1:
                    loop.set_postfix(step=i)
                else:
                    print(loss.item())
            """
        ),
        # a comprehension reads the binding just before it: the CPU loop's predictions, not the later GPU loop's
        Valid(
            """
            import torch
            for x, y in train_loader:
                preds = model(x)
                criterion(preds, y).backward()
                stats = {k: f(preds, y).item() for k, f in metrics.items()}
            model.cuda()
            for x, y in train_loader:
                preds = model(x.cuda())
                criterion(preds, y.cuda()).backward()
            """
        ),
        # a module moved to the device is no tensor: what a helper computes from it and a device is unknown
        Valid(
            """
            import torch
            device = torch.device('cuda')
            net = DQN(4).to(device)
            for x, y in train_loader:
                criterion(net(x.to(device)), y.to(device)).backward()
                reward = agent.play(net, device=device)
                writer.add_scalar('reward', reward, step)
            """
        ),
        # TensorBoard logging of a Python number, and of a device loss every N steps
        Valid(
            """
            import torch
            from torch.utils.tensorboard import SummaryWriter
            writer = SummaryWriter()
            model.cuda()
            lr = 0.1
            for i, (x, y) in enumerate(DataLoader(ds)):
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                writer.add_scalar('lr', lr, i)
                if i % 100 == 0:
                    writer.add_scalar('loss', loss, i)
            """
        ),
    ]
    invalid = [
        Invalid(
            """
            import numpy as np
            for batch in loader:
                x = batch.cuda()
                print(float(x))
            """
        ),
        Invalid(
            """
            import torch
            device = 'cuda' if torch.cuda.is_available() else 'cpu'
            running_loss = 0.0
            for inputs, labels in train_loader:
                optimizer.zero_grad()
                loss = criterion(model(inputs.to(device)), labels.to(device))
                loss.backward()
                optimizer.step()
                running_loss += loss.item()
            print(f'loss {running_loss / len(train_loader):.3f}')
            """,
            fixed="""
            import torch
            device = 'cuda' if torch.cuda.is_available() else 'cpu'
            running_loss = 0.0
            for inputs, labels in train_loader:
                optimizer.zero_grad()
                loss = criterion(model(inputs.to(device)), labels.to(device))
                loss.backward()
                optimizer.step()
                running_loss += loss.detach()
            print(f'loss {float(running_loss) / len(train_loader):.3f}')
            """,
            line=9,
            column=21,
            message="`loss.item()` waits for the device on every batch to add to `running_loss`",
        ),
        # TensorBoard logging of a device loss on every update step
        Invalid(
            """
            import torch
            import torch.nn.functional as F
            device = 'cuda'

            def update(batches):
                for x, y in batches:
                    loss = F.mse_loss(critic(x.to(device)), y.to(device))
                    writer.add_scalars('all', {'critic': loss}, step)
                    loss.backward()
                    optimizer.step()
            """,
            fixed=None,
            line=8,
            column=46,
            message="logging tensor `loss` copies it to the host on every batch, a host-device sync",
        ),
        # a dataset of the file that puts each sample on the GPU; a step helper returning `.item()`
        Invalid(
            """
            import torch
            from torch.utils.data import DataLoader, Dataset

            class Images(Dataset):
                def __getitem__(self, i):
                    return load(i).to('cuda'), labels[i]

            def train_batch(x, y):
                loss = criterion(model(x), y)
                loss.backward()
                return loss.item()

            for x, y in DataLoader(Images(), batch_size=32):
                losses.append(train_batch(x, y))
            """,
            fixed=None,
            line=11,
            column=12,
            message="`loss.item()` waits for the device on every batch, a host-device sync",
        ),
        # a device named in capitals, imported from the project's config module
        Invalid(
            """
            import torch
            from config import DEVICE
            for x, y in train_loader:
                loss = criterion(model(x.to(DEVICE)), y.to(DEVICE))
                loss.backward()
                optimizer.step()
                print(loss.item())
            """,
            fixed=None,
            line=7,
            column=11,
            message="`loss.item()` copies to the host on every batch to log it, a host-device sync",
        ),
        # Reads under a periodic guard are converted there; counts are read back with int().
        Invalid(
            """
            import torch as T
            def train(model, loader, opt, device):
                running, correct = 0.0, 0
                for i, (x, y) in enumerate(loader):
                    out = model(x.to(device))
                    loss = T.nn.functional.cross_entropy(out, y.to(device))
                    loss.backward()
                    opt.step()
                    running += loss.item() * x.size(0)
                    correct += (out.argmax(1) == y.to(device)).sum().item()
                    if i % 100 == 99:
                        print(running / 100, correct)
                        running = 0.0
                return correct
            """,
            fixed="""
            import torch as T
            def train(model, loader, opt, device):
                running, correct = 0.0, 0
                for i, (x, y) in enumerate(loader):
                    out = model(x.to(device))
                    loss = T.nn.functional.cross_entropy(out, y.to(device))
                    loss.backward()
                    opt.step()
                    running += loss.detach() * x.size(0)
                    correct += (out.argmax(1) == y.to(device)).sum()
                    if i % 100 == 99:
                        print(float(running) / 100, int(correct))
                        running = 0.0
                return int(correct)
            """,
            count=2,
            line=9,
            column=20,
            message="`loss.item()` waits for the device on every batch to add to `running`",
        ),
        # A read on every batch would sync again: a hint, no fix.
        Invalid(
            """
            import torch
            model.cuda()
            total = 0.0
            for step, (x, y) in enumerate(tqdm(train_loader)):
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                total += loss.item()
                pbar.set_postfix(loss=total / (step + 1))
            """,
            line=7,
            column=14,
            message="`loss.item()` waits for the device on every batch to add to `total`",
        ),
        # A loop that steps the optimizer is per-batch whatever it iterates; aliases resolve.
        Invalid(
            """
            import torch as T
            from torch import optim
            dev = T.device('cuda')
            opt = optim.SGD(params, lr=0.1)
            while step < max_steps:
                x, y = next(it)
                loss = loss_fn(net(x.to(dev)), y.to(dev))
                loss.backward()
                opt.step()
                if T.isnan(loss):
                    continue
                print(f'step {step}: {loss}')
                history.append(loss.item())
            """,
            count=3,
            line=10,
            column=8,
            message="`T.isnan(loss)` turns a tensor into a Python bool on every batch, a host-device sync",
        ),
        # A helper called on every batch of a loop in the same file.
        Invalid(
            """
            import torch
            def accuracy(out, y):
                return float((out.argmax(1) == y).sum())
            def train(model, loader, optimizer):
                for x, y in loader:
                    x, y = x.cuda(), y.cuda()
                    out = model(x)
                    acc = accuracy(out, y)
                    preds = out.argmax(1).cpu().numpy()
            """,
            count=2,
            line=3,
            column=12,
            message="`float((out.argmax(1) == y).sum())` waits for the device on every batch, a host-device sync",
        ),
    ]

    @classmethod
    def may_match_project(cls, text: str, project: ProjectIndex, file: Path) -> bool:
        # A text without per-batch loops has them only where other modules run its code
        # (`LoopFacts.has_per_batch_loops`): a helper module nobody runs every step is not parsed.
        return may_have_batch_loops(text) or may_run_elsewhere_text(text, project, file)

    def __init__(self, ctx, options) -> None:
        super().__init__(ctx, options)
        self.candidates: list[_Candidate] = []
        self.handed: list[cst.Call] = []  # calls with arguments: a project function may read them
        self.asked: list[cst.Call] = []  # `obj.method()` without arguments
        self.has_loops = False  # no loop, no per-batch loop: the facts need not be built
        self.stores: list[tuple[cst.Name, cst.BaseExpression]] = []  # `d[k] = v`: (d, v)
        self._backprop_asked: set[cst.FunctionDef] = set()  # `_returns_backpropagated` in progress

    # -- collecting candidates during the traversal ------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if node.args and type(func) in (cst.Name, cst.Attribute):
            self.handed.append(node)
        elif (
            not node.args
            and type(func) is cst.Attribute
            and type(func.value) is cst.Name
            and func.attr.value not in _METHODS
        ):
            self.asked.append(node)  # `model.get_step()`: may read the module's own buffer
        if type(func) is cst.Attribute and func.attr.value in _METHODS:
            if func.attr.value == "numpy" and not _forced(node):
                return  # `.numpy()` of a device tensor raises: its receiver is on the CPU already
            if func.attr.value == "cpu" or not any(a.keyword is None for a in node.args):
                self.candidates.append(_Candidate("method", node, func.value))
            return
        if type(func) is cst.Attribute and func.attr.value in ("add_scalar", "add_scalars"):
            self.candidates.extend(_Candidate("logged", v, v) for v in _logged_values(node))
            return
        if (
            type(func) is cst.Attribute
            and func.attr.value == "format"
            and isinstance(func.value, _STRINGS)
        ):
            self.candidates.extend(
                _Candidate("format", a.value, a.value) for a in node.args
            )  # "{:.3f}".format(loss)
            return
        if type(func) is not cst.Name:
            return
        positional = [a for a in node.args if a.keyword is None and a.star == ""]
        if func.value in ("any", "all") and len(positional) == 1:
            elements = positional[0].value
            if isinstance(elements, cst.GeneratorExp | cst.ListComp | cst.SetComp):
                self._condition(elements.elt)  # each element is truth-tested
            return
        if func.value in _CONVERSIONS and len(positional) == 1 and len(node.args) == 1:
            self.candidates.append(_Candidate("conversion", node, positional[0].value))
        elif func.value == "print":
            self.candidates.extend(_Candidate("format", a.value, a.value) for a in positional)

    def visit_For(self, node: cst.For) -> None:
        self.has_loops = True

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if type(target.target) is cst.Subscript and type(target.target.value) is cst.Name:
                self.stores.append((target.target.value, node.value))

    def visit_While(self, node: cst.While) -> None:
        self.has_loops = True
        self._condition(node.test)

    def visit_If(self, node: cst.If) -> None:
        self._condition(node.test)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._condition(node.test)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        """`"%.4g" % loss` and `"%s %s" % (step, *losses)` format their operands."""
        if type(node.operator) is not cst.Modulo or not _is_text(node.left):
            return
        operands = (
            [e.value for e in node.right.elements]
            if isinstance(node.right, cst.Tuple)
            else [node.right]
        )
        self.candidates.extend(_Candidate("format", o, o) for o in operands)

    def visit_Slice(self, node: cst.Slice) -> None:
        """`values[ix, start : ends[ix]]`: Python turns each bound into an int (`__index__`),
        which reads a tensor bound on the host."""
        for bound in (node.lower, node.upper, node.step):
            if bound is not None and type(bound) not in (cst.Integer, cst.UnaryOperation):
                self.candidates.append(_Candidate("bound", bound, bound))

    def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
        self.candidates.append(_Candidate("format", node.expression, node.expression))

    def _condition(self, test: cst.BaseExpression) -> None:
        """Every operand that Python turns into a bool: `a and not b` tests `a` and `b`."""
        todo = [test]
        while todo:
            current = todo.pop()
            if type(current) is cst.BooleanOperation:
                todo += [current.right, current.left]
            elif type(current) is cst.UnaryOperation and type(current.operator) is cst.Not:
                todo.append(current.expression)
            else:
                self.candidates.append(_Candidate("condition", current, current))

    # -- deciding, once the whole file is known ----------------------------------------
    def finish(self) -> None:
        if not (self.candidates or self.handed or self.asked):
            return
        if not self.ctx.uses_torch and not (
            self.ctx.fact(LoopFacts).uses_accelerator  # `imgs.cuda()` in a trainer subclass
            or self.ctx.fact(LoopFacts).borrows_accelerator
        ):
            return  # a file without torch counts only where it or its callers use a GPU
        if (
            not self.has_loops
            and not may_train(self.ctx.source)  # a training step another module runs
            and not self.ctx.fact(EntryPoints).may_run_per_step
            and not self.ctx.fact(LoopFacts).may_run_elsewhere  # a forward another module calls
        ):
            return
        loops = self.ctx.fact(LoopFacts)
        if not loops.has_per_batch_loops:
            return
        borrowed = loops.borrows_accelerator  # the device of the modules that call this one
        if not loops.uses_accelerator and not borrowed:
            return
        tensors = self.ctx.fact(TensorFacts)
        needed: list[_Candidate] = []  # syncs the host needs, left unreported
        paced: set[cst.CSTNode] = set()  # loops that wait for the device each step by design
        reported: list[tuple[_Candidate, cst.For | cst.While | cst.FunctionDef]] = []
        elsewhere = [
            *self._read_elsewhere(loops, tensors),
            *self._state_read_elsewhere(loops),
            *self._read_by_lambda(loops, tensors),
        ]
        for candidate in [*self.candidates, *elsewhere]:
            if candidate.kind == "bound" and tensors.kind(candidate.value) is not Kind.TENSOR:
                continue  # most bounds: numbers, asked before the loops
            loop = loops.per_batch_loop(candidate.node, every_update=True)
            if loop is None or not (
                self._syncs(candidate, tensors) or self._carried_tensor(candidate, loop, tensors)
            ):
                continue
            if borrowed and not self._in_borrowed_step(loop, loops):
                continue  # a loop of this file's own, which puts nothing on a device
            if loops.run_by_other_modules(loop) and self._reads_argument(candidate):
                continue  # the caller's line reports it: `meter.update(loss=loss)`
            if self._handed_to_a_step(candidate.node):
                needed.append(candidate)
                paced.add(loop)
                continue
            if self._deliberate(candidate, loop):
                needed.append(candidate)
                continue
            reported.append((candidate, loop))
        paced |= self._decoding(loops)
        waiting = self._waiting_loops(loops, reported)
        drains = self._drains(needed)
        sliced: set[cst.CSTNode | None] = set()  # subscripts with a slice bound reported
        scopes = self.ctx.fact(SemanticModel)
        for candidate, owner in reported:
            if owner in paced:
                continue  # the loop waits on the environment's action every step anyway
            element_wise = self._element_wise(candidate.node, owner)
            if candidate.kind == "bound":
                if not element_wise:
                    continue  # one slice bound per batch: the host needs it for the shape
                holder = next(
                    (a for a in scopes.ancestors(candidate.node) if type(a) is cst.Subscript),
                    None,
                )
                if holder in sliced:
                    continue  # `x[k : k + 1, ::ds[k]]`: one finding per subscript
                sliced.add(holder)
            if not element_wise and self._paced(candidate.node, waiting.get(owner, ()), owner):
                continue  # each iteration waits for the device by design: one read more is free
            if not element_wise and (
                self._drained(candidate, drains) or self._drained_ahead(candidate, drains)
            ):
                continue  # a read the host needs, just before or after, waits all the same
            if any(self._drained_for_elements(candidate, earlier) for earlier in needed):
                continue  # the read the host needs drained the queue: this one waits on nothing
            message, fix = self._advice(candidate, element_wise)
            self.report(candidate.node, message, fix)

    def _in_borrowed_step(
        self, loop: cst.For | cst.While | cst.FunctionDef, loops: LoopFacts
    ) -> bool:
        """In a file that names no device, whether `loop` runs on its callers' device: a
        function other modules run every step (`per_batch_loop` answering the function), or
        a loop of the file that steps the optimizer on each slice of a batch its function is
        handed (`for minibatch in batch.split(size): ...; self.optim.step(loss)` in an
        algorithm's update): the batch comes from the caller, on the caller's device. A loop
        over a loader the file iterates itself stays CPU work: nothing moves its batches."""
        if isinstance(loop, cst.FunctionDef):
            return True
        return (
            isinstance(loop, cst.For)
            and not loops.is_loader_like(loop.iter)
            and self._slices_handed_batch(loop.iter)
            and loops.updates(loop.body)
        )

    def _slices_handed_batch(self, value: cst.BaseExpression) -> bool:
        """`batch.split(size)` of a parameter (`_handed_batch`), or a name bound only to such
        calls (`gen = rollouts.feed_forward_generator(adv, n)`); not the parameter itself,
        which may be a loader."""
        if type(value) is cst.Name:
            bindings = self.ctx.fact(SemanticModel).reaching(value)
            return bool(bindings) and all(
                b.kind is BindingKind.ASSIGN
                and type(b.value) is cst.Call
                and self._handed_batch(b.value)
                for b in bindings
            )
        return type(value) is cst.Call and self._handed_batch(value)

    def _handed_batch(self, value: cst.BaseExpression) -> bool:
        """Whether `value`'s receiver chain starts at a parameter, also one the function rebinds
        to a call it hands the parameter to (`batch = self._add_returns(batch, buffer)`): what
        the caller handed in, processed."""
        while type(value) is cst.Call and type(value.func) is cst.Attribute:
            value = value.func.value
        if type(value) is not cst.Name:
            return False
        name = value.value
        scopes = self.ctx.fact(SemanticModel)
        function = scopes.function_of(value)
        if function is None or not any(p.name.value == name for p in function.params.params):
            return False
        bindings = scopes.reaching(value)
        return bool(bindings) and all(
            b.kind is BindingKind.PARAM
            or (b.kind is BindingKind.ASSIGN and b.value is not None and _mentions(b.value, name))
            for b in bindings
        )

    def _decoding(self, loops: LoopFacts) -> set[cst.CSTNode]:
        """The evaluation loops (or evaluation hooks) each iteration of which decodes
        autoregressively (`model.generate(**inputs, max_new_tokens=64)`, also in a function of
        the file they call): the decoding waits for the device after every token, hundreds of
        times a step, so the iteration's other reads, even one per element of a short loop,
        add nothing that matters. Only where every loop that runs the decoding trains nothing:
        a helper that decodes for validation only (`if decode:`) may run in a training loop
        that never decodes."""
        waits = self.ctx.fact(WaitsByDesign)
        found: set[cst.CSTNode] = set()
        for call in self.handed:
            if waits.generates(call):
                found |= loops.evaluating_owners(call)
        return found

    def _waiting_loops(
        self,
        loops: LoopFacts,
        reported: list[tuple[_Candidate, cst.For | cst.While | cst.FunctionDef]],
    ) -> dict[cst.CSTNode | None, list[tuple[cst.CSTNode, bool]]]:
        """The per-batch loops (or per-step functions) each iteration of which already waits for
        the device by design, outside any periodic guard: a call of the file's own function
        that returns host copies (`return t.detach().cpu()`), or a read that picks which of two
        updates the step runs (`if self.count.item() == 1: ...; opt.step()` `else: ...`).
        One more logging read in such an iteration costs a copy, not a wait: judges call it
        debatable or a false alarm. Reads repeated per element (an inner loop over parameters)
        still cost a wait each and stay findings. Not pacing, measured against the recall
        labels, which keep the reads beside them as findings: a read the host needs (llama
        recipes' eval loss read before its predictions are decoded; token ids decoded from the
        input wait only for the input's copy; `_drained` covers reads right after it),
        boolean-mask indexing, which waits to size its result (UniMatch's cutmix masks, a
        recurrent PPO's padding mask), and `torch.cuda.synchronize()`, even a timer's (blind
        labels keep a gradient norm read before the optimizer step beside one). Each loop maps
        to the nodes that wait there, each with whether it paces reads anywhere in the
        iteration (the update's choice, made as the step starts, drains the previous step) or
        only the reads before it in the same function (one after a helper's copy waits for the
        work queued since)."""
        found: dict[cst.CSTNode | None, list[tuple[cst.CSTNode, bool]]] = defaultdict(list)
        scopes = self.ctx.fact(SemanticModel)
        waits = self.ctx.fact(WaitsByDesign)
        for call in self.handed:
            if waits.returns_host_copy(call) and not any(
                scopes.is_ancestor(function, c.node)
                for function in scopes.callees[call]
                for c, _ in reported
            ):  # a helper whose own copy is a finding waits for nothing by design
                found[loops.per_batch_loop(call, every_update=True)].append((call, False))
        for candidate, owner in reported:
            if self._picks_update(candidate.node, loops):
                found[owner].append((candidate.node, True))
        found.pop(None, None)
        return found

    def _paced(
        self,
        node: cst.CSTNode,
        waits: Sequence[tuple[cst.CSTNode, bool]],
        owner: cst.For | cst.While | cst.FunctionDef,
    ) -> bool:
        """Whether one of the iteration's waits by design (`_waiting_loops`) covers the read."""
        scopes = self.ctx.fact(SemanticModel)
        design = self.ctx.fact(WaitsByDesign)
        function = scopes.function_of(node)
        at = scopes.order.get(node, -1)
        return any(
            wait is not node
            and (
                anywhere
                or (
                    scopes.function_of(wait) is function
                    and at < scopes.order.get(wait, -1)
                    and design.runs_whenever(wait, node, owner)  # not under a branch of its own
                )
            )
            for wait, anywhere in waits
        )

    def _picks_update(self, node: cst.CSTNode, loops: LoopFacts) -> bool:
        """A read in the test of an `if` each branch of which steps an optimizer: the host
        decides from it which of two updates this step runs (`if self.count.item() == 1:
        ...; opt.step()` `else: ...; adv_opt.step()`), the step's structure. A test that only
        adds an update (`if d_loss != 0: d_loss.backward(); opt.step()`) picks nothing."""
        if not self._decides(node):
            return False
        branch = next(
            (a for a in self.ctx.fact(SemanticModel).ancestors(node) if isinstance(a, cst.If)),
            None,
        )
        return (
            branch is not None
            and branch.orelse is not None
            and loops.updates(branch.body)
            and loops.updates(branch.orelse)
        )

    def _drains(self, syncs: Sequence[_Candidate]) -> dict[cst.CSTNode, bool]:
        """The statements that wait for the device by design whenever they run, and queue
        nothing after their wait: `a = action.tolist()` handed to `env.step`, `if
        torch.isnan(norm): raise ...`. Once one has run, every kernel queued before it has
        finished. Each maps to whether it queues nothing before its wait either
        (`logits.append(logit.cpu().numpy())`, not `preds.append(model(x).cpu())`): then a read
        just before it adds no wait of its own."""
        scopes = self.ctx.fact(SemanticModel)
        reads: dict[cst.CSTNode, list[cst.CSTNode]] = defaultdict(list)
        for sync in syncs:
            if sync.kind != "callee":  # a helper's read may sit under a branch of its own
                statement = scopes.statement_of(sync.node)
                if statement is not None:
                    reads[statement].append(sync.node)
        found: dict[cst.CSTNode, bool] = {}
        for statement, nodes in reads.items():
            if isinstance(statement, cst.If):
                nodes = [n for n in nodes if scopes.is_ancestor(statement.test, n)]
            elif not isinstance(statement, cst.SimpleStatementLine):
                continue
            first = min(
                (n for n in nodes if not _conditional(n, statement, scopes)),
                key=lambda n: scopes.order.get(n, -1),
                default=None,
            )
            if first is None:
                continue
            head = statement.test if isinstance(statement, cst.If) else statement
            after = self._calls_around(head, first, nodes, after=True)
            if isinstance(statement, cst.If):  # a branch that leaves queues nothing for later
                branches = [statement.body, statement.orelse]
                after += [
                    c for b in branches if b is not None and not _leaves(b) for c in _calls(b)
                ]
            if all(self._quiet(c) for c in after) and not self._computes(statement, nodes):
                at = scopes.order.get(first, -1)
                before = [
                    c
                    for c in _calls(head)
                    if c is not first
                    and not scopes.is_ancestor(c, first)
                    and (scopes.order.get(c, -1) < at or scopes.is_ancestor(first, c))
                ]
                found[statement] = all(self._quiet(c) for c in before)
        return found

    def _drained(self, later: _Candidate, drains: dict[cst.CSTNode, bool]) -> bool:
        """`labels.cpu()` right after `logits.cpu()` that a host metric needs, or
        `history.append(norm.item())` right after `if torch.isnan(norm): raise ...`: the read
        the host needs waited for every queued kernel, and with only host work between
        (logging, builtins, numpy) this one copies finished values and waits on nothing. Only
        within one block, walking back over statements that queue no device work; a read that
        computes on the device itself still waits. A first read that is itself a finding is no
        excuse: a run of logged reads stays a run of findings, each one a line to move under
        the same periodic guard."""
        if later.kind in ("callee", "bound") or not _settled(later.value):
            return False
        scopes = self.ctx.fact(SemanticModel)
        statement = scopes.statement_of(later.node)
        block = scopes.parents.get(statement) if statement is not None else None
        if statement is None or not isinstance(block, cst.IndentedBlock):
            return False
        if isinstance(statement, cst.If | cst.While):
            if not scopes.is_ancestor(statement.test, later.node):
                return False
        elif not isinstance(statement, cst.SimpleStatementLine):
            return False
        before = self._calls_around(statement, later.node, [later.node], after=False)
        if not all(self._quiet(c) for c in before) or self._computes(statement, [later.node]):
            return False
        root = _root(later.value)  # a tensor, whatever else the file knows of it
        read = frozenset([root] if root else [])
        body = list(block.body)
        for previous in reversed(body[: body.index(statement)]):
            if previous in drains:
                return True
            if not all(self._quiet(c) for c in _calls(previous)) or self._computes(
                previous, tensors=read
            ):
                return False
        return False

    def _drained_ahead(self, earlier: _Candidate, drains: dict[cst.CSTNode, bool]) -> bool:
        """`eval_loss += loss.item()` right before `logits.append(logit.cpu().numpy())` that a
        host metric needs: the later read waits for every kernel the earlier one waits for, and
        with only host work between (logging, builtins, numpy) the earlier adds no wait of its
        own: kept on the device, the step waits as long. Only within one block, over simple
        statements that neither queue device work nor leave it (`continue`, `return`), to a
        read the host needs that runs whenever the block does and queues nothing before it."""
        if earlier.kind in ("callee", "bound"):
            return False
        scopes = self.ctx.fact(SemanticModel)
        statement = scopes.statement_of(earlier.node)
        block = scopes.parents.get(statement) if statement is not None else None
        if not isinstance(statement, cst.SimpleStatementLine) or not isinstance(
            block, cst.IndentedBlock
        ):
            return False
        after = self._calls_around(statement, earlier.node, [earlier.node], after=True)
        if not all(self._quiet(c) for c in after) or self._computes(statement, [earlier.node]):
            return False
        body = list(block.body)
        for following in body[body.index(statement) + 1 :]:
            if drains.get(following):
                return True
            if not (
                isinstance(following, cst.SimpleStatementLine)
                and not any(
                    isinstance(small, cst.Return | cst.Continue | cst.Break | cst.Raise)
                    for small in following.body
                )
                and all(self._quiet(c) for c in _calls(following))
                and not self._computes(following)
            ):
                return False
        return False

    def _calls_around(
        self, statement: cst.CSTNode, read: cst.CSTNode, reads: list[cst.CSTNode], after: bool
    ) -> list[cst.Call]:
        """The calls of `statement` that run after `read` (`after`) or before it, leaving out
        the statement's `reads`, what they read (`torch.isinf(norm)` in `if torch.isnan(norm)
        or torch.isinf(norm)`: its kernel is waited for by its own read) and the calls that
        consume their host values."""
        scopes = self.ctx.fact(SemanticModel)
        at = scopes.order.get(read, -1)
        return [
            c
            for c in _calls(statement)
            if (scopes.order.get(c, -1) > at) == after
            and not any(scopes.is_ancestor(r, c) or scopes.is_ancestor(c, r) for r in reads)
        ]

    def _quiet(self, call: cst.Call) -> bool:
        """A call that queues no device computation around a read: a builtin, numpy, Python's
        `random` or `math`, a tensor made from host data (`torch.tensor(...)`) and its copy to
        the device (`torch.from_numpy(y).to(device)`), a container's method, a host read
        itself or a logger's call; never another function or method of torch (`torch.log(x)`,
        `out.max()`), whatever its name. The one vocabulary of every check that two reads have
        no device work between them."""
        func = call.func
        qualname = self.ctx.symbols.qualname(func) or ""
        if qualname.startswith(("numpy.", "random.", "math.")) or qualname in _HOST_TENSORS:
            return True
        if qualname.startswith("torch."):
            return False
        if isinstance(func, cst.Name):
            return func.value in _BUILTINS
        if not isinstance(func, cst.Attribute):
            return False
        if func.attr.value in ("to", "cuda"):
            source = func.value
            return (
                isinstance(source, cst.Call)
                and (self.ctx.symbols.qualname(source.func) or "") in _HOST_TENSORS
            )
        return func.attr.value in _CONTAINER_CALLS or func.attr.value in _LOGGING_CALLS

    def _quiet_after(self, statement: cst.CSTNode, read: cst.CSTNode) -> bool:
        """Whether every call of `statement` outside `read` (the first of two reads) is quiet."""
        scopes = self.ctx.fact(SemanticModel)
        return all(
            self._quiet(c)
            for c in _calls(statement)
            if c is not read and not scopes.is_ancestor(read, c)
        )

    def _computes(
        self,
        node: cst.CSTNode,
        reads: Sequence[cst.CSTNode] = (),
        tensors: AbstractSet[str] = frozenset(),
    ) -> bool:
        """Whether `node`, outside `reads`, computes on the device without a call: arithmetic
        with a tensor (`out @ w`, `total += loss`, or `loss = loss / n` where a later read
        shows `loss` among the `tensors`), an index by a tensor or a mask (`out[out > 0]`)."""
        facts = self.ctx.fact(TensorFacts)
        scopes = self.ctx.fact(SemanticModel)
        for found in find_all(node, (cst.BinaryOperation, cst.AugAssign, cst.Subscript)):
            if any(scopes.is_ancestor(r, found) for r in reads):
                continue
            operands: list[cst.BaseExpression] = []
            if isinstance(found, cst.BinaryOperation):
                if isinstance(found.operator, cst.MatrixMultiply):
                    return True
                operands = [found.left, found.right]
            elif isinstance(found, cst.AugAssign):
                operands = [found.target, found.value]
            elif isinstance(found, cst.Subscript):
                index = [e.slice.value for e in found.slice if isinstance(e.slice, cst.Index)]
                if any(not isinstance(i, cst.Integer | cst.SimpleString) for i in index):
                    operands = [*index, found.value]
            if any(
                facts.kind(o) is Kind.TENSOR or (isinstance(o, cst.Name) and o.value in tensors)
                for o in operands
            ):
                return True
        return False

    def _same_tensor_reads(
        self, later: _Candidate, earlier: _Candidate
    ) -> tuple[str, cst.CSTNode | None, cst.CSTNode | None] | None:
        """For a later method read of the tensor an earlier read (not a callee's) copied: the
        tensor's name and the statements holding the two reads."""
        if later.kind != "method" or earlier.kind == "callee":
            return None
        name = _read_tensor(later.value)
        if name is None or _root(earlier.value) != name:
            return None
        scopes = self.ctx.fact(SemanticModel)
        return name, scopes.statement_of(earlier.node), scopes.statement_of(later.node)

    def _drained_for_elements(self, later: _Candidate, earlier: _Candidate) -> bool:
        """`crop = int(lengths.min().item())` (a crop length the host needs), then, a few
        statements on, `for b in range(len(lengths)): n = int(lengths[b].item())` as the inner
        loop's first statement, to draw a random crop offset: the first read waited for every
        queued kernel, and an inner loop that queues no device computation (views, list
        appends, numpy and host randomness, copies of host data to the device) leaves nothing
        for its per-element reads of the same tensor to wait on. Only where every statement
        between the two is a simple one that calls nothing but builtins and these reads, and
        nothing rebinds the tensor; an inner loop that runs a forward keeps its reads findings."""
        pair = self._same_tensor_reads(later, earlier)
        if pair is None:
            return False
        name, first, second = pair
        scopes = self.ctx.fact(SemanticModel)
        body = scopes.parents.get(second) if second is not None else None
        inner = scopes.parents.get(body) if body is not None else None
        block = scopes.parents.get(first) if first is not None else None
        if not (
            isinstance(first, cst.SimpleStatementLine)
            and isinstance(inner, cst.For)
            and isinstance(body, cst.IndentedBlock)
            and body.body[0] is second
            and isinstance(block, cst.IndentedBlock)
            and not _conditional(earlier.node, first, scopes)
            and self._quiet_after(first, earlier.node)
        ):
            return False
        statements = list(block.body)
        if first not in statements or inner not in statements:
            return False
        between = statements[statements.index(first) : statements.index(inner)]
        return (
            bool(between)
            and all(
                isinstance(s, cst.SimpleStatementLine)
                and not _rebinds(s, name)
                and (s is first or all(self._quiet(c) for c in _calls(s)))
                for s in between
            )
            and not any(
                _rebinds(cast("cst.SimpleStatementLine", s), name)
                for s in find_all(inner.body, cst.SimpleStatementLine)
            )
            and all(self._quiet(call) for call in _calls(inner))
        )

    def _read_elsewhere(self, loops: LoopFacts, tensors: TensorFacts) -> list[_Candidate]:
        """`meter.update(loss=loss)` every batch, where `Meter.update` (another module of the
        project) calls `.item()` on what it is given: the sync happens at this call."""
        project = self.ctx.project
        if project is None:
            return []
        scopes = self.ctx.fact(SemanticModel)
        found = []
        syncing: dict[tuple[str, str | None], bool] = {}  # few callees, called many times
        path = self.ctx.absolute_path
        for call in self.handed:
            outside = (
                self._closure_of(call)
                or scopes.outside_callee(call)
                or self._inherited(call)
                or self._held_in(call)
            )
            if outside is None:
                continue
            if outside not in syncing:  # the cheap question first: most callees read nothing
                syncing[outside] = (
                    project.method_syncs_arguments(path, outside[0][len("self.") :], outside[1])
                    if outside[0].startswith("self.") and outside[1] is not None
                    else project.syncs_arguments(path, *outside)
                )
            if not syncing[outside] or loops.per_batch_loop(call, every_update=True) is None:
                continue
            if (self._output_helper(outside) or _decoder(outside)) and loops.evaluates_only(call):
                continue  # inference handing each batch to a helper that writes or decodes it
            value = next((a.value for a in call.args if self._holds_tensor(a.value, tensors)), None)
            if value is not None:
                found.append(_Candidate("callee", call, value))
        return found

    def _read_by_lambda(self, loops: LoopFacts, tensors: TensorFacts) -> list[_Candidate]:
        """`to_np(torch.mean(loss))` every step, where the file binds `to_np = lambda x:
        x.detach().cpu().numpy()` at module level: the lambda reads what it is given at the
        call, which is where the finding goes (as for a helper of another module)."""
        if "lambda" not in self.ctx.source:
            return []  # most files bind no lambda: no binding of a call's name to look up
        scopes = self.ctx.fact(SemanticModel)
        found = []
        for call in self.handed:
            if not isinstance(call.func, cst.Name):
                continue
            bindings = scopes.reaching(call.func)
            if not (
                len(bindings) == 1
                and bindings[0].kind is BindingKind.ASSIGN
                and isinstance(bindings[0].value, cst.Lambda)
                and _reads_parameter(bindings[0].value)
                and loops.per_batch_loop(call, every_update=True) is not None
            ):
                continue
            value = next(
                (
                    a.value
                    for a in call.args
                    if a.keyword is None and self._holds_tensor(a.value, tensors)
                ),
                None,
            )
            if value is not None:
                found.append(_Candidate("callee", call, value))
        return found

    def _state_read_elsewhere(self, loops: LoopFacts) -> list[_Candidate]:
        """`step = model.get_step()` every batch, where `model` is built from a class of another
        module whose `get_step` returns `self.step.data.item()` of a registered buffer: the
        buffer lives on the module's device, so the call waits for it."""
        project = self.ctx.project
        if project is None or not self.asked:
            return []
        scopes = self.ctx.fact(SemanticModel)
        found = []
        reads: dict[tuple[str, str], bool] = {}  # few methods, called many times
        for call in self.asked:
            outside = scopes.outside_callee(call)
            if outside is None or outside[1] is None:
                continue
            key = (outside[0], outside[1])
            if key not in reads:
                reads[key] = project.reads_own_state(self.ctx.absolute_path, *key)
            if reads[key] and loops.per_batch_loop(call, every_update=True) is not None:
                found.append(_Candidate("state", call, call))
        return found

    def _output_helper(self, outside: tuple[str, str | None]) -> bool:
        """A function of another module that reads what it is given on the host and writes
        files (`synth_samples(batch, output, ...)` saving a plot and a wav per utterance): in a
        loop that trains nothing, what it reads is what its files need."""
        project = self.ctx.project
        return (
            project is not None
            and not outside[0].startswith("self.")
            and project.writes_read_arguments(self.ctx.absolute_path, *outside)
        )

    def _reads_argument(self, candidate: _Candidate) -> bool:
        """Whether the sync reads what its function is passed (a parameter, or a loop variable
        over one): the project index then says so to the callers (`syncs_arguments`), and a
        caller passing a tensor is where the finding goes."""
        return self._from_argument(candidate.value)

    def _from_argument(self, value: cst.BaseExpression) -> bool:
        """Whether `value`'s receiver chain starts at a parameter, or a loop variable over one."""
        while True:
            if type(value) is cst.Call and type(value.func) is cst.Attribute:
                value = value.func.value
            elif type(value) is cst.Attribute or type(value) is cst.Subscript:
                value = value.value
            else:
                break
        if type(value) is not cst.Name:
            return False
        scopes = self.ctx.fact(SemanticModel)
        bindings = scopes.reaching(value)
        return bool(bindings) and all(
            b.kind is BindingKind.PARAM
            or (b.kind is BindingKind.LOOP and b.value is not None and self._from_argument(b.value))
            for b in bindings
        )

    def _closure_of(self, call: cst.Call) -> tuple[str, None] | None:
        """`averager(losses)` where `averager = EMA()` and `EMA` is not the file's: the closure
        that call of another module's factory returned, `("EMA()", None)` for the project
        index to answer (`syncs_arguments`)."""
        func = call.func
        if type(func) is not cst.Name:
            return None
        scopes = self.ctx.fact(SemanticModel)
        built = scopes.built_from(func, scopes.scope_of(call))
        name = dotted(built) if built is not None else None
        return (name + "()", None) if name else None

    def _inherited(self, call: cst.Call) -> tuple[str, str | None] | None:
        """`self.reduce_loss_dict(...)` that no method of the file answers: ("self.<Class>",
        method), for the project index to find in the class's bases in other modules."""
        scopes = self.ctx.fact(SemanticModel)
        func = call.func
        if call in scopes.callees or not (
            isinstance(func, cst.Attribute) and dotted(func.value) == "self"
        ):
            return None
        owner = next((a for a in scopes.ancestors(call) if isinstance(a, cst.ClassDef)), None)
        return ("self." + owner.name.value, func.attr.value) if owner is not None else None

    def _held_in(self, call: cst.Call) -> tuple[str, str | None] | None:
        """`meters["loss"].update(loss)` where the container holds one class's instances
        (`meters = defaultdict(AverageMetric)`, or `meters[k] = AverageMetric()` in the same
        function): that class's method, for the project index to find."""
        func = call.func
        if not (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Subscript)
            and isinstance(func.value.value, cst.Name)
        ):
            return None
        container = func.value.value
        scopes = self.ctx.fact(SemanticModel)
        scope = scopes.scope_of(container)
        classes = {
            dotted(stored.func) if isinstance(stored, cst.Call) else None
            for target, stored in self.stores
            if target.value == container.value and scopes.scope_of(target) is scope
        }
        for binding in scopes.reaching(container):
            value = binding.value
            if (
                isinstance(value, cst.Call)
                and dotted(value.func) in ("defaultdict", "collections.defaultdict")
                and value.args
            ):
                classes.add(dotted(value.args[0].value))
        if len(classes) != 1 or None in classes:
            return None
        (name,) = classes
        return (name, func.attr.value) if name and name[:1].isupper() else None

    def _holds_tensor(
        self, value: cst.BaseExpression, tensors: TensorFacts, depth: int = 0
    ) -> bool:
        """A tensor, or a container the code fills with tensors: `{"l_pix": l_pix}`, or
        `loss_dict` after `loss_dict["l_pix"] = l_pix` in the same function (where `l_pix` is a
        tensor, or a loss the function adds into what it backpropagates), what a helper of the
        file returns unchanged on one of its paths, or a module's `net.parameters()` (a
        grad-norm helper reading each parameter's norm)."""
        if depth > 2:
            return False
        if tensors.kind(value) is Kind.TENSOR:
            return True
        if (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Attribute)
            and value.func.attr.value == "parameters"
        ):
            return True
        if isinstance(value, cst.Dict):
            return any(
                isinstance(e, cst.DictElement) and tensors.kind(e.value) is Kind.TENSOR
                for e in value.elements
            )
        if isinstance(value, cst.Subscript):  # `losses["err"]`: an item of a dict of tensors
            return isinstance(value.value, cst.Name) and self._holds_tensor(
                value.value, tensors, depth + 1
            )
        if isinstance(value, cst.DictComp | cst.Call):
            return self._comprehends_tensors(value, tensors, depth)
        if not isinstance(value, cst.Name):
            return False
        scopes = self.ctx.fact(SemanticModel)
        if self._value_of_tensors(value, tensors, depth):
            return True
        if self._returned_as_is(value, tensors, depth):
            return True
        if self._tensor_on_a_path(value, tensors):
            return True
        if any(
            b.kind is BindingKind.ASSIGN
            and isinstance(b.value, cst.DictComp | cst.Call)
            and self._comprehends_tensors(b.value, tensors, depth)
            for b in scopes.reaching(value)
        ):
            return True  # `scaled = {k: v * w[k] for k, v in losses.items()}`
        if self._items_backpropagated(value):
            return True
        scope = scopes.scope_of(value)
        return any(
            target.value == value.value
            and scopes.scope_of(target) is scope
            and (
                tensors.kind(stored) is Kind.TENSOR
                or self._backpropagated(stored)
                or self._summed_into_backward(stored)
            )
            for target, stored in self.stores
        )

    def _tensor_on_a_path(self, name: cst.Name, tensors: TensorFacts) -> bool:
        """`grad_norm = clip_grad_norm_(...)` on one path and `0.0` or another module's helper
        on the others: on that path a callee that reads its argument reads a device tensor,
        each step that path runs (`tensor_to_scalar(grad_norm)`). Not where a path holds a
        host tensor, nor for a name bound in no assignment, or rebound from itself (`norm =
        norm.item()`), or holding a number where the call reads it."""
        scopes = self.ctx.fact(SemanticModel)
        at = scopes.order.get(name)
        if at is None:
            return False
        earlier = [b for b in scopes.all_bindings(name) if b.order < at]  # every path's
        if len(earlier) < 2 or any(
            b.kind is not BindingKind.ASSIGN or b.value is None or _mentions(b.value, name.value)
            for b in earlier
        ):
            return False
        if any(tensors.kind(b.value) is Kind.NOT_TENSOR for b in scopes.reaching(name) if b.value):
            return False
        kinds = [tensors.kind(b.value) for b in earlier if b.value is not None]
        return Kind.TENSOR in kinds and Kind.HOST_TENSOR not in kinds

    def _items_backpropagated(self, name: cst.Name) -> bool:
        """`losses = criterion(out, y)`, then `total = sum(losses[k] * w[k] for k in losses)`
        and `total.backward()` in the same scope: the dict's items are the losses the step
        backpropagates, so tensors."""
        scopes = self.ctx.fact(SemanticModel)
        for load, parent in self._loads_in_place(name):
            if not (isinstance(parent, cst.Subscript) and parent.value is load):
                continue
            assign = next(
                (a for a in scopes.ancestors(parent) if isinstance(a, cst.Assign | cst.BaseSuite)),
                None,
            )
            if (
                isinstance(assign, cst.Assign)
                and len(assign.targets) == 1
                and isinstance(assign.targets[0].target, cst.Name)
                and self._backpropagated(assign.targets[0].target)
            ):
                return True
        return False

    def _comprehends_tensors(
        self, value: cst.BaseExpression, tensors: TensorFacts, depth: int
    ) -> bool:
        """`{k: v * w[k] for k, v in losses.items()}` or `sum(losses.values())`, where `losses`
        holds tensors: each value computed from one of them (arithmetic keeps a tensor a
        tensor) is a tensor, and so is their sum."""
        if isinstance(value, cst.Call):  # `sum(losses.values())`
            summed = _summed_dict(value)
            return summed is not None and self._holds_tensor(summed, tensors, depth + 1)
        if not isinstance(value, cst.DictComp) or value.for_in.inner_for_in is not None:
            return False
        loop = value.for_in
        source = loop.iter
        if not (
            isinstance(source, cst.Call)
            and isinstance(source.func, cst.Attribute)
            and source.func.attr.value == "items"
            and not source.args
            and isinstance(loop.target, cst.Tuple)
            and len(loop.target.elements) == 2
            and isinstance(loop.target.elements[1].value, cst.Name)
        ):
            return False
        item = loop.target.elements[1].value.value
        computed = value.value
        while isinstance(computed, cst.BinaryOperation):  # `v * w[k]`: the tensor's side
            computed = computed.left
        return (
            isinstance(computed, cst.Name)
            and computed.value == item
            and self._holds_tensor(source.func.value, tensors, depth + 1)
        )

    def _returned_as_is(self, name: cst.Name, tensors: TensorFacts, depth: int) -> bool:
        """`loss_dict_reduced = reduce_loss_dict(loss_dict)`, where the helper (the file's, or
        another module's) returns its parameter itself on one path (`if world_size < 2: return
        loss_dict`): on that path the name holds what was passed, the tensors of `loss_dict`."""
        scopes = self.ctx.fact(SemanticModel)
        for binding in scopes.reaching(name):
            call = binding.value
            if binding.kind is not BindingKind.ASSIGN or not isinstance(call, cst.Call):
                continue
            functions = scopes.callees.get(call, [])
            if not functions and self._passes_back_elsewhere(call, tensors, depth):
                return True
            if len(functions) != 1:
                continue
            params = functions[0].params
            positional = [*params.posonly_params, *params.params]
            for returned in own_returns(functions[0]):
                param = self._parameter_returned(returned, functions[0])
                if param is None:
                    continue
                index = positional.index(param) if param in positional else None
                if index is not None and positional and positional[0].name.value == "self":
                    index -= 1  # `self.helper(x)`: the receiver is the first parameter
                passed = passed_argument(call, param.name.value, index)
                if passed is not None and self._holds_tensor(passed, tensors, depth + 1):
                    return True
        return False

    def _passes_back_elsewhere(self, call: cst.Call, tensors: TensorFacts, depth: int) -> bool:
        """`utils.reduce_dict(loss_dict)`, where the helper of another module returns its
        parameter itself on one path (the project index's `returns_argument`): on that path
        the call gives back the tensors of `loss_dict`."""
        project = self.ctx.project
        outside = self.ctx.fact(SemanticModel).outside_callee(call)
        if project is None or outside is None or outside[1] is not None:
            return False
        returned = project.returns_argument(self.ctx.absolute_path, outside[0])
        if returned is None:
            return False
        passed = passed_argument(call, returned[1], returned[0])
        return passed is not None and self._holds_tensor(passed, tensors, depth + 1)

    def _parameter_returned(
        self, returned: cst.Return, function: cst.FunctionDef
    ) -> cst.Param | None:
        """The parameter `return x` gives back unchanged: `x` bound only as that parameter."""
        value = returned.value
        if not isinstance(value, cst.Name):
            return None
        scopes = self.ctx.fact(SemanticModel)
        bindings = scopes.reaching(value)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.PARAM:
            return None
        param = bindings[0].node
        if isinstance(param, cst.Param) and scopes.function_of(param) is function:
            return param
        return None

    def _summed_into_backward(self, value: cst.BaseExpression) -> bool:
        """`l_total += l_pix`, then `l_total.backward()` in the same function: a loss the step
        backpropagates, so a tensor."""
        return any(
            isinstance(augment, cst.AugAssign)
            and augment.value is load
            and isinstance(augment.operator, cst.AddAssign)
            and isinstance(augment.target, cst.Name)
            and self._backpropagated(augment.target)
            for load, augment in self._loads_in_place(value)
        )

    def _loads_in_place(
        self, value: cst.BaseExpression
    ) -> list[tuple[cst.Name, cst.CSTNode | None]]:
        """Each load of the name `value` in its own scope, with the node it stands in."""
        if not isinstance(value, cst.Name):
            return []
        scopes = self.ctx.fact(SemanticModel)
        loads = scopes.loads[scopes.scope_of(value)].get(value.value, [])
        return [(load, scopes.parents.get(load)) for load in loads]

    def _value_of_tensors(self, name: cst.Name, tensors: TensorFacts, depth: int = 0) -> bool:
        """`v` in `for k, v in losses.items()` (or a comprehension over it), where `losses`
        holds tensors: each value is one of its tensors."""
        bindings = self.ctx.fact(SemanticModel).reaching(name)
        if depth > 2 or not bindings or any(b.kind is not BindingKind.LOOP for b in bindings):
            return False
        for binding in bindings:
            iterable = binding.value
            if not (
                isinstance(iterable, cst.Call)
                and isinstance(iterable.func, cst.Attribute)
                and not iterable.args
            ):
                return False
            method = iterable.func.attr.value
            if not (
                (method == "values" and binding.path == ())
                or (method == "items" and binding.path == (1,))
            ):
                return False
            if not self._holds_tensor(iterable.func.value, tensors, depth + 1):
                return False  # values of values are followed two deep at most
        return True

    def _backpropagated(self, value: cst.BaseExpression) -> bool:
        """A name whose value its scope backpropagates: a loss, so a tensor. The backward calls
        and the graph each carries are `Backprop`'s (`loss.backward()`,
        `scaler.scale(loss).backward()`, `accelerator.backward(loss / n)`); the backpropagated
        load has to share a binding with this one, so a name rebound to floats later in the
        scope is not taken for the loss."""
        loads = {load for load, _ in self._loads_in_place(value)}
        if not loads or not isinstance(value, cst.Name):
            return False
        scopes = self.ctx.fact(SemanticModel)
        reaching = scopes.reaching(value)
        held = {id(b.node) for b in reaching}  # `for key, loss in logs.items()`
        backprop = self.ctx.fact(Backprop)  # after `accelerator.backward(loss)` holds floats
        return any(
            carrier in loads and {id(b.node) for b in scopes.reaching(carrier)} & held
            for targets in backprop.backward_calls.values()
            for target in targets
            for carrier in backprop.carriers(target)
            if isinstance(carrier, cst.Name)
        ) or any(
            b.kind is BindingKind.ASSIGN
            and isinstance(b.value, cst.Call)
            and self._returns_backpropagated(b.value)
            for b in reaching
        )

    def _carried_tensor(
        self, candidate: _Candidate, loop: cst.CSTNode, tensors: TensorFacts
    ) -> bool:
        """`bar.set_description(f"{loss:.4f}")` at the top of a per-batch loop whose body binds
        `loss` to the step's loss further down: from the second iteration on, the name holds
        the previous step's tensor, though textual order (`SemanticModel.reaching`) sees only
        the `loss = 0` before the loop."""
        value = candidate.value
        if (
            candidate.kind == "condition"  # `if not probas: probas = vals`: a first-time test
            or not isinstance(value, cst.Name)
            or not isinstance(loop, cst.For | cst.While)
        ):
            return False
        scopes = self.ctx.fact(SemanticModel)
        at = scopes.order.get(value, -1)
        return any(
            b.kind is BindingKind.ASSIGN
            and b.value is not None
            and scopes.order.get(b.node, -1) > at
            and scopes.is_ancestor(loop.body, b.node)
            and (
                tensors.kind(b.value) is Kind.TENSOR
                or (isinstance(b.value, cst.Call) and self._returns_backpropagated(b.value))
            )
            for b in scopes.all_bindings(value)
        )

    def _returns_backpropagated(self, call: cst.Call) -> bool:
        """`loss = self.backward_propagate(loss, step)`, a function of the file every `return`
        of which hands back a name it backpropagated (`loss.backward()` then `return loss`):
        the caller's name holds that loss."""
        targets = self.ctx.fact(SemanticModel).callees.get(call)
        if not targets or len(targets) != 1 or targets[0] in self._backprop_asked:
            return False
        self._backprop_asked.add(targets[0])  # a recursive helper answers no
        try:
            returned = [r.value for r in own_returns(targets[0])]
            return bool(returned) and all(
                isinstance(r, cst.Name) and self._backpropagated(r) for r in returned
            )
        finally:
            self._backprop_asked.discard(targets[0])

    def _syncs(self, candidate: _Candidate, tensors: TensorFacts) -> bool:
        if candidate.kind in ("callee", "state"):
            return True  # `_read_elsewhere` found a tensor, or a container of them, passed
        kind = tensors.kind(candidate.value)
        if kind is Kind.UNKNOWN and self._backpropagated(candidate.value):
            return True  # `loss = losses[cfg.kind](model, x)`, then `loss.backward()`
        if candidate.kind != "method" or kind is not Kind.UNKNOWN:
            return kind is Kind.TENSOR
        # Only tensors and numpy values have these methods: an unknown receiver is a tensor
        # unless the file shows it is numpy, or the code converts whatever it is given
        # (`if torch.is_tensor(lr): lr = lr.item()`).
        if isinstance(candidate.value, cst.Name) and tensors.type_test(candidate.value) is not None:
            return False
        if tensors.dataset_sample(candidate.value):
            return False  # `dataset.get(i).tolist()`: a sample the dataset serves from the host
        return not self.ctx.fact(NumpyProvenance).is_numpy(candidate.value)

    def _deliberate(self, candidate: _Candidate, loop: cst.CSTNode) -> bool:
        """Reads that are the point of the code: assertions, values agreed across ranks, backend
        workarounds and paths that run off CUDA (`runs_without_cuda`: the `else` of `if
        x.device.type in ["cuda"]:`), values the host needs where they go."""
        return (
            self._asserted(candidate.node)
            or (self._decides(candidate.node) and self._reduced_across_ranks(candidate.value))
            or self._backend_branch(candidate.node)
            or runs_without_cuda(self.ctx, candidate.node)
            or self._written_out(candidate.node)
            or self._host_needed(candidate, loop)
        )

    def _host_needed(self, candidate: _Candidate, loop: cst.CSTNode) -> bool:
        """The value goes where only the host can take it (`HostWrites.host_needs`): decoded,
        written into a host buffer, a shape, a test that leaves the loop; and, for an array
        copied in evaluation (grad off or a loop over validation data, and no loop that runs
        it trains), a metric the host
        computes over the whole set. A scalar read (`.item()`, `float(t)`) for a metric is a
        number that could stay on the device, and training metrics could too, even where a
        no_grad helper computes them inside the training loop. One element of a tensor read as
        a number per iteration of an inner loop (`n = int(counts[b])`) is a finding whatever
        it is for: one read of the whole tensor before that loop would do. An element copied
        as an array (`images[i].cpu()` saved as a PNG, `depth[0].cpu()` of each rendered chunk)
        is a host product like the whole batch: the files and host metrics it feeds are the
        iteration's work."""
        node = candidate.node
        if candidate.kind not in ("method", "conversion", "condition") or not isinstance(
            node, cst.BaseExpression
        ):
            return False
        array_copy = (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in _ARRAY_COPIES
            and not _reduced_whole(node.func.value)
        )
        if not array_copy and _indexed(candidate.value) and self._element_wise(node, loop):
            return False
        flow = self.ctx.fact(HostWrites)
        if flow.host_needs(node, metrics=False):
            return True
        return (
            array_copy
            and isinstance(node, cst.Call)
            and (flow.host_needs(node, metrics=True) or self._handed_to_a_collector(node))
            and self.ctx.fact(LoopFacts).evaluates_only(node)
            and (
                self._over_eval_data(loop)
                or self.ctx.fact(Evaluation).in_eval_function(loop)
                or self.ctx.fact(Evaluation).inference_only
                or self.ctx.fact(Evaluation).after_eval_switch(loop)
                or self.ctx.fact(Grad).disabled(node)
            )
        )  # the grad facts cost a walk: asked last

    def _over_eval_data(self, loop: cst.CSTNode) -> bool:
        """A loop over validation or test data (`for inputs in validation_dataloader:`,
        `self.trainer.val_loader`): evaluation even where grad stays on (a forward without
        `no_grad` after `model.eval()`, or only the forward under it)."""
        return isinstance(loop, cst.For) and self.ctx.fact(Evaluation).is_eval_data(loop.iter)

    def _handed_to_a_collector(self, node: cst.Call) -> bool:
        """`logger.update_stats(pred=score.detach().cpu(), ...)`: a copy handed straight to a
        method of an object the file does not define, which keeps what it is given for its
        host-side metrics (the file cannot follow it further); not a torch function, and not a
        list or dict of the file's own (`scores.append(out.cpu())`), whose values the file's
        flow follows itself."""
        scopes = self.ctx.fact(SemanticModel)
        argument = scopes.parents.get(node)
        call = scopes.parents.get(argument) if isinstance(argument, cst.Arg) else None
        if not (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Attribute)
            and call not in scopes.callees
            and not _container_call(call)
            and not (self.ctx.symbols.qualname(call.func) or "").startswith("torch")
        ):
            return False
        receiver = call.func.value
        return not (
            isinstance(receiver, cst.Name)
            and any(_builds_container(b.value) for b in scopes.reaching(receiver))
        )

    def _backend_branch(self, node: cst.CSTNode) -> bool:
        """Under `if isinstance(device, DeviceMPS):`-like tests: a workaround for one backend (MPS, XLA, CPU)."""
        child = node
        for parent in self.ctx.fact(SemanticModel).ancestors(node):
            if isinstance(parent, cst.FunctionDef | cst.Lambda | cst.ClassDef):
                return False
            if (
                isinstance(parent, cst.If)
                and child is parent.body
                and self._names_backend(parent.test)
            ):
                return True
            child = parent
        return False

    def _names_backend(self, test: cst.BaseExpression) -> bool:
        """A test that holds on one backend: `isinstance(d, DeviceMPS)`, `x.device.type == "cpu"` (not `not is_xla()`)."""
        if isinstance(test, cst.BooleanOperation):
            return self._names_backend(test.left) or self._names_backend(test.right)
        if isinstance(test, cst.UnaryOperation) or (
            isinstance(test, cst.Comparison)
            and any(
                isinstance(c.operator, cst.NotEqual | cst.IsNot | cst.NotIn)
                for c in test.comparisons
            )
        ):
            return False
        return bool(_BACKEND.search(self.ctx.code(test)))

    def _decides(self, node: cst.CSTNode) -> bool:
        """Whether `node` is read by the test of an `if` or `while`: the host branches on it."""
        child = node
        for parent in self.ctx.fact(SemanticModel).ancestors(node):
            if isinstance(parent, cst.If | cst.While | cst.IfExp):
                return child is parent.test
            if isinstance(parent, cst.BaseStatement | cst.BaseSmallStatement):
                return False
            child = parent
        return False

    def _reduced_across_ranks(self, value: cst.BaseExpression) -> bool:
        """`dist.all_reduce(done); if done:` -- the host needs the agreed value to decide. (Read
        for logging, an all-reduced value is still a device tensor: its `.item()` syncs.)"""
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
            value = value.func.value
        if not isinstance(value, cst.Name):
            return False
        scopes = self.ctx.fact(SemanticModel)
        scope = scopes.scope_of(value)
        for load in scopes.loads[scope].get(value.value, []):
            arg = scopes.parents.get(load)
            call = scopes.parents.get(arg) if isinstance(arg, cst.Arg) else None
            if isinstance(call, cst.Call) and _last_name(call.func) in _COLLECTIVES:
                return True
        return False

    def _handed_to_a_step(self, node: cst.CSTNode) -> bool:
        """The host needs the value at once: it goes to a `.step(...)` that is not an optimizer's,
        `env.step(pi(s).argmax().item())` or `a = ...item()` then `env.step(a)` (an RL action)."""
        scopes = self.ctx.fact(SemanticModel)
        names: list[str] = []
        for parent in scopes.ancestors(node):
            if isinstance(parent, cst.Call) and self._takes_data_step(parent):
                return True
            if isinstance(parent, cst.Assign):
                names = [t.target.value for t in parent.targets if isinstance(t.target, cst.Name)]
            if isinstance(parent, cst.BaseStatement | cst.BaseSmallStatement):
                break
        loads = scopes.loads[scopes.scope_of(node)]
        return any(
            self._in_data_step(load, scopes) for name in names for load in loads.get(name, [])
        )

    def _written_out(self, node: cst.CSTNode) -> bool:
        """The value goes only into files and paths (`save_image(x.cpu(), path)`, a label that
        names the output folder, a helper that saves what it is given): the host needs it, so
        the copy is the job, not an accident."""
        return isinstance(node, cst.BaseExpression) and self.ctx.fact(HostWrites).only_written(node)

    def _in_data_step(self, load: cst.Name, scopes: SemanticModel) -> bool:
        for parent in scopes.ancestors(load):
            if isinstance(parent, cst.Call) and self._takes_data_step(parent):
                return True
            if isinstance(parent, cst.BaseStatement | cst.BaseSmallStatement):
                return False
        return False

    @staticmethod
    def _takes_data_step(call: cst.Call) -> bool:
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "step" or not call.args:
            return False
        return not set(name_tokens(dotted(func.value) or "")) & _UPDATE_OWNERS

    def _element_wise(self, node: cst.CSTNode, loop: cst.CSTNode) -> bool:
        """Whether an inner loop or comprehension inside the per-batch loop repeats the sync."""
        child = node
        for parent in self.ctx.fact(SemanticModel).ancestors(node):
            if parent is loop or isinstance(parent, cst.FunctionDef | cst.Lambda):
                return False
            if isinstance(parent, cst.For | cst.While) and (
                child is parent.body or child is getattr(parent, "test", None)
            ):
                return True
            if (
                isinstance(parent, cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp)
                and child is not parent.for_in
            ):
                return True
            child = parent
        return False

    def _asserted(self, node: cst.CSTNode) -> bool:
        """Checks in tests (`assert`, `self.assertEqual(x.item(), 1)`) read values on purpose."""
        for parent in self.ctx.fact(SemanticModel).ancestors(node):
            if isinstance(parent, cst.Assert):
                return True
            if isinstance(parent, cst.Call):
                name = _last_name(parent.func)
                if name.startswith("assert"):
                    return True
            if isinstance(parent, cst.BaseStatement | cst.BaseSmallStatement):
                return False
        return False

    # -- messages and fixes ------------------------------------------------------------
    def _advice(self, candidate: _Candidate, element_wise: bool) -> tuple[str, Fix]:
        value = _short(self.ctx.code(candidate.value))
        if element_wise and candidate.kind in ("method", "conversion"):
            return (
                f"`{_short(self.ctx.code(candidate.node))}` syncs with the device for every element, on every batch",
                self._hint(
                    "Move the whole tensor to the host once per batch (`.tolist()` or `.cpu()`) before the inner loop, or keep the work on the device"
                ),
            )
        if candidate.kind == "bound":
            return (
                f"slice bound `{value}` is read from the device for every element, on every batch, a host-device sync",
                self._hint(
                    "Read the bounds to the host once per batch (`.tolist()`) before the inner loop"
                ),
            )
        if candidate.kind == "condition":
            return (
                f"`{_short(self.ctx.code(candidate.node))}` turns a tensor into a Python bool on every batch, a host-device sync",
                self._hint(
                    "Check it every N steps under `if step % n == 0:`, or keep the decision on the device with `torch.where`"
                ),
            )
        if candidate.kind == "callee":
            return (
                f"`{_short(self.ctx.code(candidate.node))}` reads tensor `{value}` on the host inside the called code, on every batch, a host-device sync",
                self._hint(
                    f"Pass it every N steps under `if step % log_every == 0:`, or accumulate `{value}.detach()` on the device and pass the mean"
                ),
            )
        if candidate.kind == "state":
            return (
                f"`{_short(self.ctx.code(candidate.node))}` reads a tensor the module holds on the host, on every batch, a host-device sync",
                self._hint(
                    "Keep the value as a Python number beside the tensor, or read it every N steps under `if step % n == 0:`"
                ),
            )
        if candidate.kind == "logged":
            return (
                f"logging tensor `{value}` copies it to the host on every batch, a host-device sync",
                self._hint(
                    f"Log it every N steps under `if step % log_every == 0:`, or accumulate `{value}.detach()` on the device and log the mean"
                ),
            )
        if candidate.kind == "format":
            return (
                f"formatting tensor `{value}` copies it to the host on every batch, a host-device sync",
                self._hint(
                    f"Log it every N steps under `if step % log_every == 0:` (with `{value}.item()`)"
                ),
            )
        call = candidate.node
        assert isinstance(call, cst.Call)
        shown = _short(self.ctx.code(call))
        accumulator = self._accumulation(call)
        if accumulator is not None:
            total = _short(self.ctx.code(accumulator))
            fix = (
                self._accumulate_fix(call, candidate.value, accumulator)
                if isinstance(accumulator, cst.Name)
                else None
            )
            message = f"`{shown}` waits for the device on every batch to add to `{total}`"
            if fix is not None:
                return message, fix
            return message, self._hint(
                f"Accumulate on the device (`{total} += {value}.detach()`) and call `.item()` once per log interval or after the loop"
            )
        collection = self._collection(call)
        moves = isinstance(call.func, cst.Attribute) and call.func.attr.value in (
            "cpu",
            "numpy",
            "tolist",
        )
        if collection is not None:
            return f"`{shown}` copies to the host on every batch, a host-device sync", self._hint(
                f"Append `{value}.detach()` to `{collection}` on the device and convert once after the loop (`torch.cat`/`torch.stack`, then `.cpu()`/`.tolist()`)"
            )
        if self._logged(call):
            return (
                f"`{shown}` copies to the host on every batch to log it, a host-device sync",
                self._hint("Log it every N steps under `if step % log_every == 0:`"),
            )
        if moves:
            return f"`{shown}` copies to the host on every batch, a host-device sync", self._hint(
                "Collect the values on the device and move them once after the loop (`torch.cat(outputs).cpu()`), or once per log interval"
            )
        return f"`{shown}` waits for the device on every batch, a host-device sync", self._hint(
            "Keep the value on the device and call `.item()` once per log interval or after the loop"
        )

    def _hint(self, message: str) -> Fix:
        return self.make_fix(message, Applicability.DISPLAY_ONLY)

    def _accumulation(self, call: cst.Call) -> cst.Name | cst.Attribute | None:
        """`total += <call>` or `total += <call> * n`: the accumulator."""
        if isinstance(call.func, cst.Attribute) and call.func.attr.value != "item":
            return None
        if isinstance(call.func, cst.Name) and call.func.value == "bool":
            return None
        scopes = self.ctx.fact(SemanticModel)
        child: cst.CSTNode = call
        for parent in scopes.ancestors(call):
            if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, _ARITHMETIC):
                child = parent
                continue
            if (
                isinstance(parent, cst.AugAssign)
                and parent.value is child
                and isinstance(parent.target, cst.Name | cst.Attribute)
            ):
                if isinstance(parent.operator, cst.AddAssign | cst.SubtractAssign):
                    return parent.target
            return None
        return None

    def _collection(self, call: cst.Call) -> str | None:
        """`preds.append(<call>)`: the list's name."""
        scopes = self.ctx.fact(SemanticModel)
        arg = scopes.parents.get(call)
        outer = scopes.parents.get(arg) if isinstance(arg, cst.Arg) else None
        if (
            isinstance(outer, cst.Call)
            and isinstance(outer.func, cst.Attribute)
            and outer.func.attr.value in ("append", "extend")
        ):
            return _short(self.ctx.code(outer.func.value))
        return None

    def _logged(self, call: cst.Call) -> bool:
        """Whether the value goes straight into print/logging/a progress bar/an f-string."""
        scopes = self.ctx.fact(SemanticModel)
        for parent in scopes.ancestors(call):
            if isinstance(parent, cst.FormattedStringExpression):
                return True
            if isinstance(parent, cst.Call):
                name = _last_name(parent.func)
                if name in _LOGGING_CALLS:
                    return True
            if isinstance(parent, cst.BaseStatement | cst.BaseSmallStatement):
                return False
        return False

    # -- the accumulation fix ----------------------------------------------------------
    def _accumulate_fix(
        self, call: cst.Call, value: cst.BaseExpression, target: cst.Name
    ) -> Fix | None:
        """The unsafe rewrite, when it is correct: add on the device, convert at every read."""
        tensors = self.ctx.fact(TensorFacts)
        if tensors.kind(value) is not Kind.TENSOR:
            return None
        scopes = self.ctx.fact(SemanticModel)
        scope = scopes.scope_of(target)
        name = target.value
        if name in scopes.declared[scope]:
            return None
        bindings = scopes.bindings[scope].get(name, [])
        inits = [b.value for b in bindings if b.kind is BindingKind.ASSIGN]
        if any(not _number(v) for v in inits) or not inits:
            return None
        if any(b.kind not in (BindingKind.ASSIGN, BindingKind.AUGMENT) for b in bindings):
            return None
        if any(
            isinstance(b.node, cst.AugAssign)
            and not isinstance(b.node.operator, cst.AddAssign | cst.SubtractAssign)
            for b in bindings
        ):
            return None
        convert = self._conversion(bindings)
        if convert is None or self.ctx.fact(SemanticModel).read_in_nested_scope(name, scope):
            return None
        loops = self.ctx.fact(LoopFacts)
        reads = scopes.loads[scope].get(name, [])
        if any(loops.per_batch_loop(read, every_update=True) is not None for read in reads):
            return None
        edits = [self._detach_edit(call, value, self._integral(value))]
        edits += [
            self.ctx.replace(read, f"{convert}({name})")
            for read in reads
            if not _converted(read, scopes)
        ]
        return self.make_fix(
            f"Accumulate `{name}` on the device (`.detach()`) and convert it with `{convert}()` where it is read",
            Applicability.UNSAFE,
            *edits,
            writes="`.detach()` and a conversion where read",
        )

    def _conversion(self, bindings: list[Binding]) -> str | None:
        """`float` or `int`: the Python type the sum had, so reads keep it. `int` only when every
        value added is evidently integral; a float anywhere makes the sum a float."""
        kinds = {self._numeric(b.value) for b in bindings}
        if "float" in kinds:
            return "float"
        return "int" if kinds == {"int"} else None

    def _numeric(self, node: cst.BaseExpression | None, depth: int = 0) -> str | None:
        """ "int" or "float" for a Python number evidently of that type, else None.

        `.item()` of a count is an int, of a loss or a mean a float; `/` gives a float.
        """
        node = _unsigned(node)
        if node is None or depth > 4:
            return None
        if isinstance(node, cst.Integer | cst.Float):
            return "int" if isinstance(node, cst.Integer) else "float"
        if isinstance(node, cst.BinaryOperation):
            return self._arithmetic(node, depth)
        if isinstance(node, cst.Name):
            bindings = self.ctx.fact(SemanticModel).reaching(node)
            return (
                self._numeric(bindings[0].value, depth + 1)
                if len(bindings) == 1 and bindings[0].kind is BindingKind.ASSIGN
                else None
            )
        if isinstance(node, cst.Subscript):  # `x.shape[0]`, `x.size()[0]`
            return "int" if _last_name(node.value) in ("shape", "size") else None
        if not isinstance(node, cst.Call):
            return None
        name = _last_name(node.func)
        if isinstance(node.func, cst.Name):
            return {"float": "float", "int": "int", "len": "int"}.get(name)
        if name in ("size", "numel", "dim", "ndimension", "nelement"):
            return "int"
        if name != "item" or node.args:
            return None
        receiver = node.func.value  # type: ignore[attr-defined]
        if self._integral(receiver):
            return "int"
        return "float" if _floating(receiver, self.ctx.fact(SemanticModel)) else None

    def _arithmetic(self, node: cst.BinaryOperation, depth: int) -> str | None:
        left, right = self._numeric(node.left, depth + 1), self._numeric(node.right, depth + 1)
        if isinstance(node.operator, cst.Divide):
            return "float" if left or right else None
        if not isinstance(
            node.operator, cst.Add | cst.Subtract | cst.Multiply | cst.FloorDivide | cst.Modulo
        ):
            return None
        if "float" in (left, right):
            return "float"
        return "int" if left == right == "int" else None

    def _integral(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        """A count: `(a == b).sum()`, `pred.eq(y).sum()`, `torch.sum(a == b)`, `.long()`."""
        if depth > 3:
            return False
        if isinstance(node, cst.Comparison):
            return not any(
                isinstance(c.operator, cst.Is | cst.IsNot | cst.In | cst.NotIn)
                for c in node.comparisons
            )
        if isinstance(node, cst.Name):
            bindings = self.ctx.fact(SemanticModel).reaching(node)
            single = (
                bindings[0].value
                if len(bindings) == 1 and bindings[0].kind is BindingKind.ASSIGN
                else None
            )
            return single is not None and self._integral(single, depth + 1)
        if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
            return False
        method = node.func.attr.value
        if method in (
            "long",
            "int",
            "count_nonzero",
            "eq",
            "ne",
            "lt",
            "gt",
            "le",
            "ge",
            "argmax",
            "argmin",
        ):
            return True
        if method != "sum":
            return False
        if self.ctx.symbols.qualname(node.func) == "torch.sum":  # torch.sum(a == b)
            return bool(node.args) and self._integral(node.args[0].value, depth + 1)
        return self._integral(node.func.value, depth + 1)

    def _detach_edit(self, call: cst.Call, value: cst.BaseExpression, integral: bool) -> Edit:
        if isinstance(call.func, cst.Attribute):
            if (
                integral
            ):  # (a == b).sum().item() -> (a == b).sum(): counts carry no autograd history
                return self.ctx.replace(call, call.func.value)
            return self.ctx.replace(
                call, call.with_changes(func=call.func.with_changes(attr=cst.Name("detach")))
            )
        needs_parens = (
            not isinstance(value, cst.Name | cst.Attribute | cst.Call | cst.Subscript)
            and not value.lpar
        )
        text = self.ctx.code(value)
        return self.ctx.replace(call, f"({text}).detach()" if needs_parens else f"{text}.detach()")


def _decoder(outside: tuple[str, str | None]) -> bool:
    """A project helper named for turning token ids into text (`decode_sequence(vocab, seq)`,
    `decode_tokens`): the host needs the ids it reads, as `HostWrites.host_needs` says of
    `tokenizer.decode(ids)`."""
    tokens = set(name_tokens(outside[1] or outside[0].rsplit(".", 1)[-1]))
    return "decode" in tokens and bool(tokens & _TOKEN_WORDS)


def _reduced_whole(value: cst.BaseExpression) -> bool:
    """`x.sum()`, `loss.mean()` without a dim: one number, whose copy (`x.sum().cpu()`) is a
    scalar read that could stay on the device, however an array copy is spelled."""
    return (
        isinstance(value, cst.Call)
        and not value.args
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value in _WHOLE_REDUCTIONS
    )


def _reads_parameter(function: cst.Lambda) -> bool:
    """`lambda x: x.detach().cpu().numpy()`: a lambda whose body copies or reads one of its
    parameters on the host (`.item()`, `.cpu()`, `.numpy()`, `.tolist()` in its method chain)."""
    current: cst.BaseExpression = function.body
    reads = False
    while True:
        if isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute):
            reads = reads or current.func.attr.value in _METHODS
            current = current.func.value
        elif isinstance(current, cst.Attribute):
            current = current.value
        else:
            break
    params = function.params
    names = {p.name.value for p in [*params.posonly_params, *params.params]}
    return reads and isinstance(current, cst.Name) and current.value in names


def _summed_dict(value: cst.BaseExpression) -> cst.BaseExpression | None:
    """`losses` in `sum(losses.values())`: Python's sum of a dict's values, a tensor when they
    are; None for anything else."""
    if not (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Name)
        and value.func.value == "sum"
        and len(value.args) == 1
        and value.args[0].keyword is None
        and value.args[0].star == ""
    ):
        return None
    values = value.args[0].value
    if (
        isinstance(values, cst.Call)
        and isinstance(values.func, cst.Attribute)
        and values.func.attr.value == "values"
        and not values.args
    ):
        return values.func.value
    return None


def _indexed(value: cst.BaseExpression) -> bool:
    """Whether the tensor read is an element of another (`counts[b]`, `x[i].sum()`)."""
    while True:
        if isinstance(value, cst.Subscript):
            return True
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
            value = value.func.value
        elif isinstance(value, cst.Attribute):
            value = value.value
        else:
            return False


def _forced(call: cst.Call) -> bool:
    """`x.numpy(force=True)`: copies a device tensor to the host (any other `.numpy()` raises on one)."""
    return any(a.keyword is not None and a.keyword.value == "force" for a in call.args)


def _is_text(node: cst.BaseExpression) -> bool:
    """A string, or string arithmetic such as `("%11s" * 2 + "%11.4g" * 5)`."""
    while isinstance(node, cst.BinaryOperation):
        node = node.left
    return isinstance(node, _STRINGS)


def _last_name(func: cst.BaseExpression) -> str:
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else ""


def _unsigned(node: cst.BaseExpression | None) -> cst.BaseExpression | None:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return node.expression
    return node


def _number(node: cst.BaseExpression | None) -> bool:
    return isinstance(_unsigned(node), cst.Integer | cst.Float)


def _converted(read: cst.Name, scopes: SemanticModel) -> bool:
    """A read that already is `float(total)` / `int(total)`."""
    arg = scopes.parents.get(read)
    call = scopes.parents.get(arg) if isinstance(arg, cst.Arg) else None
    return (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Name)
        and call.func.value in ("float", "int")
        and len(call.args) == 1
    )


def _floating(node: cst.BaseExpression, scopes: SemanticModel, depth: int = 0) -> bool:
    """A loss or a mean: the names and calls that carry floating-point values."""
    if depth > 3:
        return False
    if isinstance(node, cst.Name | cst.Attribute):
        last = node.value if isinstance(node, cst.Name) else node.attr.value
        if "loss" in last.lower():
            return True
        if isinstance(node, cst.Name):
            bindings = scopes.reaching(node)
            return (
                len(bindings) == 1
                and bindings[0].kind is BindingKind.ASSIGN
                and bindings[0].value is not None
                and _floating(bindings[0].value, scopes, depth + 1)
            )
        return False
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        if node.func.attr.value in ("mean", "float", "double", "norm", "std", "var"):
            return True
        return node.func.attr.value in ("detach", "sum") and _floating(
            node.func.value, scopes, depth + 1
        )
    return False


# Tensors made from host data: copying one to the device waits for no kernel.
_HOST_TENSORS = frozenset({"torch.from_numpy", "torch.tensor", "torch.as_tensor"})
# Calls that queue no device work around a read the host needs (`_quiet`).
_BUILTINS = frozenset(
    {"int", "float", "bool", "len", "str", "list", "tuple", "dict", "print", "range", "enumerate"}
    | {"zip", "isinstance", "sorted", "round", "abs", "min", "max", "sum", "repr", "format"}
)
_CONTAINER_CALLS = frozenset(
    {"append", "extend", "insert", "add", "get", "items", "keys", "values", "setdefault"}
    | {"detach", *_METHODS}
)


def _root(value: cst.BaseExpression) -> str | None:
    """The name a read's receiver starts from: `tokens` in `tokens[i].detach()`."""
    while isinstance(value, cst.Call | cst.Attribute | cst.Subscript):
        value = value.func if isinstance(value, cst.Call) else value.value
    return value.value if isinstance(value, cst.Name) else None


def _leaves(branch: cst.CSTNode) -> bool:
    """Whether an `if` body or `else` ends by leaving: `raise`, `return`, `continue`, `break`."""
    if isinstance(branch, cst.Else):
        branch = branch.body
    if not isinstance(branch, cst.IndentedBlock | cst.SimpleStatementSuite) or not branch.body:
        return False
    last = branch.body[-1]
    if isinstance(last, cst.SimpleStatementLine):
        last = last.body[-1]
    return isinstance(last, cst.Raise | cst.Return | cst.Continue | cst.Break)


def _settled(value: cst.BaseExpression) -> bool:
    """Whether reading `value` needs no new kernel but elementwise arithmetic: `loss_ce`,
    `inputs["labels"].detach().cpu()`, `(loss - kl_loss).data` (`loss.mean()`, `out @ w` and
    `out[mask]` queue work)."""
    if isinstance(value, cst.Name | cst.Integer | cst.Float | cst.SimpleString):
        return True
    if isinstance(value, cst.Attribute):
        return _settled(value.value)
    if isinstance(value, cst.Subscript):
        return _settled(value.value) and all(
            isinstance(e.slice, cst.Index)
            and isinstance(e.slice.value, cst.Integer | cst.SimpleString)
            for e in value.slice
        )
    if isinstance(value, cst.BinaryOperation):
        return (
            isinstance(value.operator, cst.Add | cst.Subtract | cst.Multiply | cst.Divide)
            and _settled(value.left)
            and _settled(value.right)
        )
    return (
        isinstance(value, cst.Call)
        and not value.args
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value in ("detach", "cpu")
        and _settled(value.func.value)
    )


def _read_tensor(value: cst.BaseExpression) -> str | None:
    """The name of a tensor read as it is (`x`, `x[i]`, `x.detach()`, `x.cpu()`), with nothing
    computed on the way that could queue device work; else None."""
    while not isinstance(value, cst.Name):
        if isinstance(value, cst.Subscript):
            if not all(
                isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.Name | cst.Integer)
                for e in value.slice
            ):
                return None
            value = value.value
        elif (
            isinstance(value, cst.Call)
            and not value.args
            and isinstance(value.func, cst.Attribute)
            and value.func.attr.value in ("detach", "cpu")
        ):
            value = value.func.value
        else:
            return None
    return value.value


def _conditional(node: cst.CSTNode, statement: cst.CSTNode, scopes: SemanticModel) -> bool:
    """Whether `node` may not run when `statement` does: an arm of `x if c else y`, the right
    of `and`/`or`, a comprehension or a lambda."""
    child = node
    for parent in scopes.ancestors(node):
        if parent is statement:
            return False
        if isinstance(parent, cst.BooleanOperation):
            if child is parent.right:
                return True
        elif isinstance(parent, cst.IfExp):
            if child is not parent.test:
                return True
        elif isinstance(
            parent,
            cst.Lambda | cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp,
        ):
            return True
        child = parent
    return True


def _mentions(value: cst.BaseExpression, name: str) -> bool:
    """Whether the name `name` occurs anywhere in `value` (an attribute's too): `batch` in
    `self._add_returns(batch, buffer)`, `norm` in `norm.item()`."""
    return any(cast("cst.Name", n).value == name for n in find_all(value, cst.Name))


def _rebinds(statement: cst.SimpleStatementLine, name: str) -> bool:
    """Whether the statement assigns `name`: a later read of it reads another value."""
    return any(
        isinstance(small, cst.Assign | cst.AugAssign | cst.AnnAssign)
        and name in {n.value for n in _target_names(small)}
        for small in statement.body
    )


def _target_names(small: cst.Assign | cst.AugAssign | cst.AnnAssign) -> list[cst.Name]:
    """The names an assignment binds, through tuple and list targets."""
    targets: list[cst.BaseExpression] = (
        [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
    )
    found: list[cst.Name] = []
    while targets:
        target = targets.pop()
        if isinstance(target, cst.Name):
            found.append(target)
        elif isinstance(target, cst.Tuple | cst.List):
            targets.extend(e.value for e in target.elements)
    return found


def _calls(node: cst.CSTNode) -> list[cst.Call]:
    """Every call under `node` (libcst's `children` would visit every token and space too)."""
    return cast("list[cst.Call]", find_all(node, cst.Call))
