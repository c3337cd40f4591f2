"""TL001 eval-without-no-grad."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.edits import replaced
from torchlint.analysis.evaluation import EvalScope, Evaluation
from torchlint.analysis.grad import Block, Grad, GradMode
from torchlint.analysis.leaves import TrainedLeaves
from torchlint.analysis.nodes import find_all
from torchlint.analysis.text import may_evaluate
from torchlint.diagnostics import Applicability, Edit, Fix, FixAvailability, Position
from torchlint.rule import Invalid, Rule, Valid

_TRAIN_AND_VALIDATE = """\
import torch
from torch import nn

def fit(model, opt, train_loader, val_loader):
    model.train()
    for x, y in train_loader:
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    correct = 0
    # validation
    for x, y in val_loader:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct
"""


class EvalWithoutNoGrad(Rule):
    code = "TL001"
    name = "eval-without-no-grad"
    summary = "A forward pass for evaluation or inference runs with autograd recording"
    fix_availability = FixAvailability.UNSAFE
    fix_versions = {
        "`torch.no_grad()`": "1.0",
    }
    tokens = ("torch", "import *")  # torch itself, or a star import that may bring it
    text_tests = (may_evaluate,)  # it looks only at evaluation code
    docs = """
## What it does
Flags a model's forward pass (`model(x)`, `self.net(x)`, `model.forward(x)`) that runs for
evaluation, validation, testing or inference while autograd is on. Evaluation is recognised
from `model.eval()` earlier in the same function, a function named like evaluation (`validate`,
`evaluate`, `test`, `predict`, `infer`, `generate`...), a loop over a validation or test
loader (`for x, y in val_loader`), a forward on test data (`net(test_x)`, unless the file built
`test_x` with a factory such as `torch.zeros` to probe shapes), a forward on a `Variable` made
with `volatile=True` (which torch ignores since 0.4), a forward that follows training in the
same block (a loop that runs `backward()` itself or through the file's functions, a call of a
function of the file holding such a loop, such as `train_model(model, epochs)`, or a
framework's `fit(...)` handed a module or a data loader), unless the module is built anew
after it and no weights are loaded into it (a shape probe), a function's forward of a global module put in eval mode at module level
(and never back in training mode), or a forward in the top-level code of a script that loads
weights (`load_state_dict`, `torch.load`, `from_pretrained`) and never trains (no `backward`,
optimizer or `.train()`), in its `main` or in a function they call, directly or through other
functions. `.eval()` chained on construction (`enc = Encoder(d).eval()`) counts as a switch, and
so does binding what a function of the project returns when its every return is a module put in
eval mode (`detector = get_feature_detector(url)`, returning `torch.jit.load(f).eval()`, also
through a module-level cache dict, in this file or another module). A method of a helper
class that is not a module (a metric, a scorer) evaluates when it runs a network the class puts
in eval mode wherever it binds it (`self.classifier = classifier.eval()`) and never trains,
unless another module of the project calls a method of that name under `no_grad`.
A call counts as a forward pass when the callee is a module
built in the file (also through a function of the file that returns one, `net = create_net()`,
or loaded whole with `torch.load(path)` without `weights_only`; not a criterion such as `nn.CrossEntropyLoss()` or a class named `...Loss`:
its graph hangs off the model's forward, which gets the finding; but `ModelWithLoss`, a model
run with its loss, is a module; a local name bound to a `self.` attribute holding one, or to its
`.module`, holds one too), the object `.eval()` is called on, or named like one (`model`, `net`,
`encoder`, `backbone`...; not `tf_model` or `keras_net`, another framework's model; a
capitalised name is a class unless the file binds it to a module construction, `G = Generator()`,
`C = D_VECTOR(...).eval().cuda()`); a call of a method of a module class of the file that itself runs
a forward (`agent.act(obs)`) counts too, and so does a call in a loop of a function of the
file that returns what a forward of its own computes with grad on, where no evaluation of its
own is reported there (`pred, true = self._process_one_batch(x, y)` in `vali`'s loop, a helper
training shares; also one at module level named `forward(model, i, data)`, which is no
module's forward).

A method called on a name the file builds nothing for but names like a module (a parameter:
`model.predict(seqs, items)` in `evaluate(model, ...)` of a utility module) is a forward pass
when the project defines that method, and every class that does is a module class whose method
runs its own forward with its caller's grad mode (`self(x)`, a module-named attribute, or a
`torch.nn` layer its `__init__` builds, `self.item_emb = nn.Embedding(n, d)`); a scorer's
`predict`, or one decorated `@torch.no_grad()`, leaves it unknown.

A call that makes a statement by itself (`rs = run_epoch(model, loader, crit, None)`) evaluates
where it runs with grad on when the file also makes it as a statement of a `with
torch.no_grad():` (or `inference_mode()`) body with the same flags (`None`, `True`, `False`
and positional strings at the same places): the author's own
`no_grad` says the call evaluates. It counts where the callee is a function of the file that
runs forwards in a loop that nothing else reports, or one the file cannot see that is named
for evaluation, called in a loop or on evaluation data (`trainer.val(0, val_loader)` on a
`--test` path, beside `with torch.no_grad(): trainer.val(epoch, val_loader)`; not
`model.predict(new_batch)` once, a demo); the fix wraps the statement.

A loop shared by training and testing that trains only under a test of one of its function's
parameters (`if train:`, `if phase == "train":`) evaluates when the file calls that function
with the flag off and grad on (`self.iteration(epoch, self.test_data, train=False)`), unless
the project's other modules call that caller only under `no_grad`: the forward is reported
with no automatic fix, since the training calls need the graph (run the loop under
`torch.set_grad_enabled(train)`).

A function that trains nothing itself, whose every forward's outputs are read only through
`.data`, `.detach()`, `.item()`, `.tolist()` or `float(...)` (after arithmetic and calls on them,
and through the names bound to them; an output unpacked into a local nothing reads is dropped
too, `action, _, _ = self.policy.sample(state)`, unless it leaves by `global`, `nonlocal` or
`locals()`), keeps none of the graphs it records: a
reinforcement-learning agent's `get_action` returning `probs.data.cpu().numpy()` on every
environment step, a target network's forward a helper returns `.detach()`ed. It evaluates
wherever its callers run it repeatedly; the decorator goes on it, for every caller. A forward
none of whose outputs is read is a warm-up, not evaluation.

Code that trains bare tensors instead of modules (`w` built with `requires_grad=True`, or
differentiated in a training loop and updated after each backward) gets the same check
without a model: a function that computes from such a tensor together with other data
(`val_x @ w`) and returns only numbers (`.item()`, `float(...)`) builds a graph nobody can
use, whoever calls it.

It stays quiet when:
- the forward already runs under `torch.no_grad()`, `torch.inference_mode()`,
  `torch.set_grad_enabled(False)` or a decorator of those, or in a function only called from
  such code in the same file; or the function or method called carries such a decorator
  itself, in this file or in another module of the project (`lm.generate(x)` where `generate`
  is decorated `@torch.inference_mode()`), or is a framework method that turns grad off
  itself (a Hugging Face model's `generate`, also through a PEFT wrapper, through every
  binding that reaches the call and through what the file's calls pass for a parameter);
- grad is switched explicitly (`torch.enable_grad()`, `set_grad_enabled(flag)`, a context
  manager of the file's own that does), also by the method called, on a model whose class the
  file does not resolve, where a class of the project defines a method of that name that turns
  grad on itself (`model.forward_itm(samples)`, whose body enters
  `torch.set_grad_enabled(True)` for a Grad-CAM that calls `backward()`);
- the evaluation code needs gradients: it calls `backward()` or `torch.autograd.grad`, sets
  `requires_grad`, steps an optimizer, or its result feeds a `backward()` (fine-tuning with
  frozen batch norm, adversarial examples, test-time adaptation): a call in a loop body or
  function that runs `backward()` counts as feeding it (also a call through a parameter the
  function is handed to, `train(loader, net_g, predict, opt)` calling `predict(fake)` in its
  training loop), unless a periodic guard whose branch
  runs no backward holds it (`if step % 100 == 0: rewards.append(test_env())`);
- the module's class holds no parameters or submodules, nor do its project bases up to
  `nn.Module` (a reader of cached features with an `.eval()`), or it is a torch layer without
  weights (`nn.Upsample`, `nn.CosineSimilarity`): its forward records nothing of its own;
- the code turns the forward's value into numpy without detaching it, through operations that
  keep its graph (`model(x).cpu().numpy()`, `feats[:, 0].cpu().numpy()` on the name bound to
  it in the same block, or a function of the file it is handed to that does so on every call:
  `stats.append_torch(features)`): `.numpy()` raises on a tensor that requires grad, so the
  forward records no graph there (frozen weights, a TorchScript detector, a caller's
  `no_grad`), whatever the file shows; `argmax`, comparisons or `.detach()` first prove nothing;
- the module's parameters are frozen: `net.requires_grad_(False)`, also chained on a mode switch
  or a copy (`sampler.eval().requires_grad_(False)`, `G = copy.deepcopy(G).eval()
  .requires_grad_(False)`), or `p.requires_grad = False` / `p.requires_grad_(False)` for each
  of `net.parameters()`: nothing is recorded unless the inputs require grad;
- the forward's result is what a model function returns, and its factory hands that function
  out (`def get_model_fn(model): def model_fn(x): model.eval(); return model(x)` ...
  `return model_fn`): its holder decides the grad mode, and may differentiate through it
  (`torch.autograd.grad` of a score in a likelihood);
- a framework or wrapper disables grad itself: Lightning's `validation_step`/`test_step`/
  `predict_step` and every hook its evaluation loops run, of modules and callbacks alike
  (`on_validation_epoch_end`, `on_validation_batch_end`, `on_test_*`, `on_predict_*`), with
  the functions only they call, fairseq's `valid_step`, the `prediction_step`/`evaluate` of a Hugging Face
  `Trainer` subclass, catalyst's `predict_batch` (its `predict_loader` runs it under
  `no_grad`), ultralytics `YOLO`, transformers `pipeline`, PyG's `LabelPropagation` (whose
  forward is decorated `@torch.no_grad()`), a model a PEFT wrapper hands back
  (`model = model.merge_and_unload()`) calling `generate`;
- the grad mode belongs to the callers: methods of a module class of the file (its API:
  `predict`, `evaluate_actions`) unless they switch it to eval mode, loop over forwards
  (generation) or take the result out of autograd (`.item()`, `.numpy()`); a module's `forward`
  and the methods it calls; helpers called only from other evaluation functions; overrides
  that delegate to `super()`; shape-probing forwards in `__init__`; a helper named for
  evaluation nested in a function that is not, called only there, where that function returns
  a value (`inference` inside `render_rays`, which training backpropagates through); a module-level function
  the file never calls whose every call in the project's other files runs under `no_grad` or
  `inference_mode` (found by the project index, also in a single-file run), also where a
  base class hands the bound method to a stage runner under `no_grad`
  (`with torch.no_grad(): self.run_stage("valid", self.valid)`); a function named for
  prediction that a module importing this one calls where the result feeds a training step
  (`preds = self.compute_predictions(batch)` before `loss.backward()`): it is the training
  forward, whatever its name says;
- the file is a unit-test module, or does not use torch (directly or through a star import of a
  project module that imports it).

Evaluation must repeat to be worth a finding: a forward in a loop or comprehension, in a
function a framework runs every step or epoch, or in a function that may run many times (any
function, unless it is a `main` or every call of it in the file runs once). A single forward
outside any loop in code that runs once (a library's `__main__` demo, a self-test: a
module-level function without parameters or decorators that no code of the project calls,
`def test():` building its own model and inputs; a shape check, a one-image `main`; a `hubconf.py`, which torch.hub imports, is a library module) is left alone, and so is a forward in code that exports or traces the module
(`torch.onnx.export`, `torch.jit.trace`: a warm-up), a forward outside any loop whose every
input holds no data (`model(torch.ones(1, 3, h, w).cuda())`, also through casts such as
`.type_as(w)`, a tuple of such tensors and `None`, or a name bound once to
`torch.zeros(...)`/`torch.FloatTensor(1, *shape)` and never written into, perhaps moved after
(`x = x.cuda()`): a warm-up, a shape check, a FLOPs count; random noise of any size counts when
the forward's result is dropped, `model(input)` as a statement firing counting hooks, not the
noise a generator's kept output is sampled from), and code of a function that trains in a loop of its own placed before
that loop, where nothing runs the function again (a debug check of one batch's output). A
helper whose only forward runs on such a made-up input (`compare(sig, model)` running
`model(torch.randn(1, 2, n))`, once per converted checkpoint) evaluates no data wherever it is
called, and a method of a class of the project's own that the project calls only on its other
classes (`self.test_step(...)` in other trainers, none on a receiver that may hold this one; no
framework base, no `getattr` lookup, no notebook naming it) never runs; one nothing calls at all
is API, and is still reported.
A forward on evaluation data or after
training in the same run, or in a script that only loads weights and runs them, is still
reported when it runs once: it is the workload (a whole split, the images a script generates),
unless its input is one example made into a batch of one (`net(clip.unsqueeze(0))`,
`model(x[None])`, also through names, a dict of inputs or an earlier forward's result): a
demo showing one result.

It reports once per evaluation scope (function, loop or block), at the first forward pass.

## Why is this bad?
With grad on, every operation of the forward records a node of the autograd graph and keeps
the activations the backward pass would need, although no backward pass ever comes. That
costs time and, above all, memory: an evaluation batch then needs roughly the activation
memory of a training batch, which limits the evaluation batch size and can run out of memory
where the same batch under `torch.no_grad()` fits easily. `model.eval()` does not turn
autograd off: it only switches dropout and batch norm to their evaluation behaviour.

## Example
```python
model.eval()
for x, y in val_loader:
    correct += (model(x).argmax(1) == y).sum().item()
```

## Use instead
```python
model.eval()
with torch.no_grad():
    for x, y in val_loader:
        correct += (model(x).argmax(1) == y).sum().item()
```
or decorate an evaluation function with `@torch.no_grad()`. `torch.inference_mode()` is
faster still, but its tensors can never enter autograd later, so the fix uses `no_grad`.

## Fix safety
The fix wraps the evaluation loop or block in `with torch.no_grad():` (re-indenting it), or
decorates an evaluation function with `@torch.no_grad()`, and adds `import torch` when the
file has none. It is unsafe: tensors produced in the wrapped code no longer have
`requires_grad`, so anything that later needs their gradients fails — a caller in another file
that calls `backward()` on what a decorated function returns, an attack or saliency method
reached through a function defined elsewhere, or a tensor cached for later training. Check
that nothing downstream differentiates through the result. No fix is offered for `async`
functions or code that yields or awaits inside the block, where a context manager would leak
the grad mode to other code. In a notebook a wrap stays in one cell: evaluation code that runs
on over several cells gets one `with torch.no_grad():` per cell.

## References
- [torch.no_grad](https://pytorch.org/docs/stable/generated/torch.no_grad.html)
- [torch.inference_mode](https://pytorch.org/docs/stable/generated/torch.autograd.grad_mode.inference_mode.html)
- [Autograd mechanics: locally disabling gradient computation](https://pytorch.org/docs/stable/notes/autograd.html#locally-disabling-gradient-computation)
- [PyTorch Performance Tuning Guide: disable gradient calculation for inference](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html)
- [Faster Deep Learning Training with PyTorch (L. Kuhn): turn off gradient computation for validation](https://efficientdl.com/faster-deep-learning-in-pytorch-a-guide/)
"""

    valid = [
        # a module rebuilt after training with no weights loaded is a shape probe; a state dict loaded with weights_only
        Valid(
            """
            import torch

            def train_model(model):
                for x in loader:
                    model(x).sum().backward()

            train_model(model)
            probe = Net()
            print(probe(torch.zeros(1, 3)).shape)
            """
        ),
        Valid(
            """
            import torch

            state = torch.load('m.pt', weights_only=True)
            for x in loader:
                model(x).sum().backward()
            """
        ),
        # a single forward outside any loop: a library's demo, an export warm-up
        Valid(
            """
            import torch
            from torch import nn

            class Net(nn.Module):
                def forward(self, x):
                    return self.fc(x)

            def export(path):
                model = Net()
                model.load_state_dict(torch.load(path))
                model.eval()
                dummy = torch.randn(1, 8)
                model(dummy)
                torch.onnx.export(model, dummy, "net.onnx")

            if __name__ == "__main__":
                net = Net()
                net.eval()
                print(net(torch.randn(2, 8)).shape)
            """
        ),
        # already under no_grad / inference_mode / set_grad_enabled(False), any alias
        Valid(
            """
            import torch

            def evaluate(model, loader):
                model.eval()
                with torch.no_grad():
                    for x, _ in loader:
                        model(x)
            """
        ),
        Valid(
            """
            import torch as T

            @T.inference_mode()
            def predict(model, x):
                return model(x)
            """
        ),
        Valid(
            """
            from torch import no_grad

            @no_grad()
            def validate(net, x):
                return net(x)
            """
        ),
        Valid(
            """
            import torch
            model.eval()
            with torch.set_grad_enabled(False):
                for x in val_loader:
                    model(x)
            """
        ),
        Valid(
            """
            import torch
            model.eval()
            with torch.autocast('cuda'), torch.inference_mode():
                out = model(x)
            """
        ),
        # only called from a no_grad context in the same file
        Valid(
            """
            import torch

            def run_validation(model, loader):
                return [model(x) for x, _ in loader]

            def fit(model, loader):
                with torch.no_grad():
                    run_validation(model, loader)
            """
        ),
        # the scope needs gradients: fine-tuning, adversarial examples
        Valid(
            """
            import torch

            def evaluate(model, x, opt):
                loss = model(x).entropy().mean()
                loss.backward()
                opt.step()
            """
        ),
        Valid(
            """
            import torch

            def evaluate_adversarial(model, x, y):
                model.eval()
                x.requires_grad_(True)
                loss = torch.nn.functional.cross_entropy(model(x), y)
                grad, = torch.autograd.grad(loss, x)
                return model(x + 0.1 * grad.sign())
            """
        ),
        # fine-tuning with frozen batch norm: backward comes after the eval-mode forward
        Valid(
            """
            import torch

            def finetune(model, loader, opt):
                for x, y in loader:
                    model.eval()
                    out = model(x)
                    loss = (out - y).abs().mean()
                    loss.backward()
                    opt.step()
            """
        ),
        # its result feeds a backward pass in the same file
        Valid(
            """
            import torch

            def predict(model, x):
                return model(x)

            for x, y in train_loader:
                loss = (predict(model, x) - y).pow(2).mean()
                loss.backward()
            """
        ),
        # grad switched explicitly
        Valid(
            """
            import torch

            def predict(model, x):
                with torch.enable_grad():
                    return model(x)
            """
        ),
        Valid(
            """
            import torch
            for phase in ['train', 'val']:
                for x, y in loaders[phase]:
                    with torch.set_grad_enabled(phase == 'train'):
                        out = model(x)
            """
        ),
        Valid(
            """
            import torch
            torch.set_grad_enabled(False)
            model.eval()
            print(model(x))
            """
        ),
        # a context manager of the file's own that sets the grad mode
        Valid(
            """
            import torch

            class Runner:
                def _mode(self, training):
                    return torch.set_grad_enabled(training)

                def predict(self, x):
                    with self._mode(False):
                        return self.model(x)
            """
        ),
        # a module's own API method: callers choose the grad mode (a policy's evaluate_actions trains)
        Valid(
            """
            import torch
            from torch import nn

            class Policy(nn.Module):
                def evaluate_actions(self, obs, actions):
                    return self.value_net(obs), self.action_net(obs).log_softmax(-1)
            """
        ),
        # a step of a forward, an override delegating to its base
        Valid(
            """
            import torch
            from torch import nn

            class Block(nn.Module):
                def predict(self, h):
                    return self.head_net(h)

                def forward(self, h):
                    return self.predict(h)
            """
        ),
        Valid(
            """
            import torch
            from base import Generator

            class Sampler(Generator):
                def generate(self, ids):
                    embeds = self.encoder(ids)
                    return super().generate(embeds)
            """
        ),
        # wrappers that already run without grad; callables that are not modules
        Valid(
            """
            import torch
            from ultralytics import YOLO

            model = YOLO('yolo.pt')

            def predict(frame):
                return model(frame)
            """
        ),
        Valid(
            """
            import torch
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained('t5')
            model.eval()
            ids = tokenizer(text)
            """
        ),
        Valid(
            """
            import torch

            def evaluate(trainer, model):
                trainer.wrap_model(model)
                return solver.model()
            """
        ),
        # frozen parameters record no graph
        Valid(
            """
            import torch
            teacher.requires_grad_(False)
            teacher.eval()
            for x in val_loader:
                teacher(x)
            """
        ),
        # training code, not evaluation
        Valid(
            """
            import torch

            def train(model, loader):
                model.train()
                for x, y in loader:
                    model(x)
            """
        ),
        # not a forward pass: a method, a class, an imported function
        Valid(
            """
            import torch

            def evaluate(model, x):
                return model.predict(x)
            """
        ),
        Valid(
            """
            import torch

            def predict(x):
                return Model(x)
            """
        ),
        Valid(
            """
            import torch
            from utils import model

            def validate(x):
                return model(x)
            """
        ),
        # `valid_lens` are valid lengths, not validation data
        Valid(
            """
            import torch

            def batch_loss(net, loss, tokens, valid_lens_x):
                return loss(net(tokens, valid_lens_x.reshape(-1)))
            """
        ),
        # a shape probe on a tensor the file builds; a forward after training that trains again (meta-learning)
        Valid(
            """
            import torch

            test_x = torch.zeros(1, 3, 32, 32)
            print(model(test_x).shape)
            """
        ),
        Valid(
            """
            import torch

            for x, y in loader:
                net(x).sum().backward()
                opt.step()
            adapted = net(test_x)
            adapted.sum().backward()
            """
        ),
        # a criterion is not a model: the finding goes to the model's forward, once
        Valid(
            """
            import torch
            from torch import nn

            loss_function = nn.CrossEntropyLoss()
            for x, y in loader:
                loss_function(net(x), y).backward()
                opt.step()
            print(loss_function(preds_val, y_val).item())
            """
        ),
        # a module built after the training loop is a new, untrained one: a shape probe
        Valid(
            """
            import torch
            from torch import nn

            for x, y in loader:
                net(x).sum().backward()
                opt.step()
            net = nn.Sequential(nn.Linear(4, 2))
            print(net(img).shape)
            """
        ),
        # a method of a module that runs no forward; a global switched back to training in a function
        Valid(
            """
            import torch
            from torch import nn

            class RNN(nn.Module):
                def init_hidden(self, n):
                    return torch.zeros(1, n, 8)

            rnn = RNN()
            rnn.eval()
            h = rnn.init_hidden(4)
            """
        ),
        Valid(
            """
            import torch

            model.eval()

            def run(x, y):
                model.train()
                return model(x)
            """
        ),
        # a script that loads weights: its module methods belong to their callers, and it may train
        Valid(
            """
            import torch
            from torch import nn

            class Net(nn.Module):
                def restore(self, path):
                    self.load_state_dict(torch.load(path))

                def embed(self, x):
                    return self.encoder(x)
            """
        ),
        Valid(
            """
            import torch

            net.load_state_dict(torch.load('init.pt'))
            loss = net(x).sum()
            loss.backward()
            """
        ),
        # a library module: a helper its model's forward calls is a step of that forward
        Valid(
            """
            import torch
            from torch import nn

            def aggregate(pooled, classifier):
                return classifier(pooled)

            class Head(nn.Module):
                def forward(self, x):
                    return aggregate(x, self.classifier)

            def build(name):
                return Head.from_pretrained(name)
            """
        ),
        # a library file that loads weights: functions only other files call, a function named like a model
        Valid(
            """
            import torch

            def efficientnet(width):
                return [width] * 4

            def load_weights(model, path):
                model.load_state_dict(torch.load(path))

            def params(name):
                return efficientnet(width=2)

            def features(model, x):
                return model(x)
            """
        ),
        # a dummy forward in a constructor, probing shapes
        Valid(
            """
            import torch
            from torch import nn

            class Det(nn.Module):
                def __init__(self, backbone):
                    super().__init__()
                    self.backbone = backbone
                    self.backbone.eval()
                    self.stride = 256 / self.backbone(torch.zeros(1, 3, 256, 256)).shape[-1]
            """
        ),
        # a Lightning hook: the trainer runs it without grad
        Valid(
            """
            import torch
            import pytorch_lightning as pl

            class Lit(pl.LightningModule):
                def validation_step(self, batch, i):
                    return self.model(batch)
            """
        ),
        Valid(
            """
            import torch
            from lightning import LightningModule

            class Base(LightningModule):
                pass

            class Lit(Base):
                def test_step(self, batch, i):
                    return self.model(batch)
            """
        ),
        # fairseq's trainer and Hugging Face's Trainer run these hooks without grad
        Valid(
            """
            import torch
            from fairseq.tasks import FairseqTask

            class Task(FairseqTask):
                def valid_step(self, sample, model, criterion):
                    model.eval()
                    return model(sample)
            """
        ),
        Valid(
            """
            import torch
            from transformers import Trainer

            class MyTrainer(Trainer):
                def prediction_step(self, model, inputs, only_loss):
                    return model(**inputs)
            """
        ),
        # a tensor trained by hand: scaled or reduced alone, logged in the training step, returned as a tensor
        Valid(
            """
            import torch

            w = torch.randn(3, requires_grad=True)

            def size():
                return w.norm().item()

            def loss_of(x, y):
                return ((x @ w - y) ** 2).mean()
            """
        ),
        Valid(
            """
            import torch

            def fit(w, loader):
                for x, y in loader:
                    loss = ((x @ w - y) ** 2).mean()
                    loss.backward()
                    step(w)
                    print(loss.item())
            """
        ),
        # unit tests
        Valid(
            """
            import torch
            import pytest

            def test_forward():
                model.eval()
                assert model(torch.ones(1)).shape == (1,)
            """
        ),
        # no torch at all
        Valid(
            """
            def evaluate(model, x):
                return model(x)
            """
        ),
    ]
    invalid = [
        # a loop that trains only under its flag, run with the flag off: no automatic fix
        Invalid(
            """
            import torch

            def run_epoch(net, loader, opt, train=True):
                for x, y in loader:
                    loss = (net(x) - y).pow(2).mean()
                    if train:
                        opt.zero_grad()
                        loss.backward()
                        opt.step()

            def fit(net, loaders, opt):
                for epoch in range(10):
                    run_epoch(net, loaders["train"], opt)
                    run_epoch(net, loaders["test"], opt, train=False)
            """,
            line=5,
            column=17,
            message="`net(...)` evaluates (when `fit` runs `run_epoch` with `train=False`) with autograd recording",
        ),
        Invalid(
            """
            import torch

            def evaluate(model, loader):
                model.eval()
                return [model(x) for x, _ in loader]
            """,
            fixed="""
            import torch

            @torch.no_grad()
            def evaluate(model, loader):
                model.eval()
                return [model(x) for x, _ in loader]
            """,
            line=5,
            column=13,
            message="`model(...)` evaluates (in `evaluate`) with autograd recording",
        ),
        Invalid(
            """
            import torch as T

            class Runner:
                @staticmethod
                def predict(net, x):
                    return net(x).softmax(-1)
            """,
            fixed="""
            import torch as T

            class Runner:
                @staticmethod
                @T.no_grad()
                def predict(net, x):
                    return net(x).softmax(-1)
            """,
            line=6,
            column=16,
            message="`net(...)` evaluates (in `predict`) with autograd recording",
        ),
        Invalid(
            _TRAIN_AND_VALIDATE,
            fixed=_TRAIN_AND_VALIDATE.replace(
                "    # validation\n    for x, y in val_loader:\n        correct += (model(x).argmax(1) == y).sum().item()\n",
                "    # validation\n    with torch.no_grad():\n        for x, y in val_loader:\n            correct += (model(x).argmax(1) == y).sum().item()\n",
            ),
            line=15,
            column=21,
            message="`model(...)` evaluates (in the loop over `val_loader`) with autograd recording",
        ),
        # `from torch import nn` only: the fix imports torch; one finding for two forwards
        Invalid(
            """
            from torch import nn

            net = nn.Sequential(nn.Linear(4, 2))

            def show(x1, x2):
                net.eval()
                a = net(x1)
                b = net(x2)  # second
                print(a, b)
            """,
            fixed="""
            from torch import nn
            import torch

            net = nn.Sequential(nn.Linear(4, 2))

            def show(x1, x2):
                net.eval()
                with torch.no_grad():
                    a = net(x1)
                    b = net(x2)  # second
                print(a, b)
            """,
            line=7,
            column=9,
            message="`net(...)` evaluates (after `net.eval()`) with autograd recording",
        ),
        # a loop over a test loader, a module bound in the file under a neutral name
        Invalid(
            """
            import torch

            class Net(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = torch.nn.Linear(4, 2)

            clf = Net()
            for xb, yb in test_dl:
                preds = clf(xb)
                total += (preds.argmax(1) == yb).sum()
            """,
            fixed="""
            import torch

            class Net(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = torch.nn.Linear(4, 2)

            clf = Net()
            with torch.no_grad():
                for xb, yb in test_dl:
                    preds = clf(xb)
                    total += (preds.argmax(1) == yb).sum()
            """,
            line=10,
            column=13,
            message="`clf(...)` evaluates (in the loop over `test_dl`) with autograd recording",
        ),
        # a method of a module that switches itself to eval mode and calls itself
        Invalid(
            """
            import torch.nn as nn

            class Classifier(nn.Module):
                def labels(self, x):
                    self.eval()
                    return self(x).argmax(-1)
            """,
            fixed="""
            import torch.nn as nn
            import torch

            class Classifier(nn.Module):
                def labels(self, x):
                    self.eval()
                    with torch.no_grad():
                        return self(x).argmax(-1)
            """,
            line=6,
            column=16,
            message="`self(...)` evaluates (after `self.eval()`) with autograd recording",
        ),
        # a predictor wrapping a model
        Invalid(
            """
            import torch

            class Predictor:
                def __init__(self, model):
                    self.model = model

                def predict(self, x):
                    return self.model(x).softmax(-1)
            """,
            fixed="""
            import torch

            class Predictor:
                def __init__(self, model):
                    self.model = model

                @torch.no_grad()
                def predict(self, x):
                    return self.model(x).softmax(-1)
            """,
            line=8,
            column=16,
            message="`self.model(...)` evaluates (in `predict`) with autograd recording",
        ),
        # a with-block that is not about grad does not count; comments and strings keep their text
        Invalid(
            """
            import torch
            self.model.eval()
            with open(path) as f:
                for line in f:
                    \"""keep
                this\"""
                    # encode
                    out = self.model(encode(line))
            """,
            fixed="""
            import torch
            self.model.eval()
            with torch.no_grad():
                with open(path) as f:
                    for line in f:
                        \"""keep
                this\"""
                        # encode
                        out = self.model(encode(line))
            """,
            line=8,
            column=15,
            message="`self.model(...)` evaluates (after `self.model.eval()`) with autograd recording",
        ),
        # called both from no_grad code and without it: still a finding
        Invalid(
            """
            import torch

            def generate(model, z):
                return model(z)

            with torch.no_grad():
                generate(model, z)
            samples = generate(model, z)
            """,
            fixed="""
            import torch

            @torch.no_grad()
            def generate(model, z):
                return model(z)

            with torch.no_grad():
                generate(model, z)
            samples = generate(model, z)
            """,
            line=4,
            column=12,
            message="`model(...)` evaluates (in `generate`) with autograd recording",
        ),
        # a helper only called by evaluation code is covered by the caller's finding
        Invalid(
            """
            import torch

            def predict(model, x):
                return model(x)

            def evaluate(model, xs):
                first = model(xs[0])
                return [first] + [predict(model, x) for x in xs[1:]]
            """,
            fixed="""
            import torch

            def predict(model, x):
                return model(x)

            @torch.no_grad()
            def evaluate(model, xs):
                first = model(xs[0])
                return [first] + [predict(model, x) for x in xs[1:]]
            """,
            line=7,
            column=13,
            message="`model(...)` evaluates (in `evaluate`) with autograd recording",
        ),
        # `predict_step` outside Lightning is the file's own; `forward_*` methods are forward passes too
        Invalid(
            """
            import torch

            class Seq2Seq(Base):
                def predict_step(self, batch):
                    feats = self.encoder.forward_features(batch)
                    return self.decoder(feats).argmax(-1)
            """,
            fixed="""
            import torch

            class Seq2Seq(Base):
                @torch.no_grad()
                def predict_step(self, batch):
                    feats = self.encoder.forward_features(batch)
                    return self.decoder(feats).argmax(-1)
            """,
            line=5,
            column=17,
            message="`self.encoder.forward_features(...)` evaluates (in `predict_step`) with autograd recording",
        ),
        # a module's own generation loop: its result never meets a backward pass
        Invalid(
            """
            import torch
            from torch import nn

            class LM(nn.Module):
                def forward(self, idx):
                    return self.net(idx)

                def generate(self, idx, steps):
                    for _ in range(steps):
                        idx = torch.cat([idx, self(idx)[:, -1:].argmax(-1)], 1)
                    return idx
            """,
            fixed="""
            import torch
            from torch import nn

            class LM(nn.Module):
                def forward(self, idx):
                    return self.net(idx)

                @torch.no_grad()
                def generate(self, idx, steps):
                    for _ in range(steps):
                        idx = torch.cat([idx, self(idx)[:, -1:].argmax(-1)], 1)
                    return idx
            """,
            line=10,
            column=35,
            message="`self(...)` evaluates (in `generate`) with autograd recording",
        ),
        # a forward on test data after the training loop, and one inside it
        Invalid(
            """
            import torch

            for x, y in loader:
                loss = (net(x) - y).pow(2).mean()
                loss.backward()
                opt.step()
            preds = net(test_x)
            print(preds)
            """,
            fixed="""
            import torch

            for x, y in loader:
                loss = (net(x) - y).pow(2).mean()
                loss.backward()
                opt.step()
            with torch.no_grad():
                preds = net(test_x)
            print(preds)
            """,
            line=7,
            column=9,
            message="`net(...)` evaluates (on `test_x`) with autograd recording",
        ),
        Invalid(
            """
            import torch

            for x, y in loader:
                net(x).sum().backward()
                opt.step()
                out = net(test_x)
                print(out)
            """,
            fixed="""
            import torch

            for x, y in loader:
                net(x).sum().backward()
                opt.step()
                with torch.no_grad():
                    out = net(test_x)
                print(out)
            """,
            line=6,
            column=11,
            message="`net(...)` evaluates (on `test_x`) with autograd recording",
        ),
        # a volatile Variable: pre-0.4 code whose no-grad flag torch now ignores
        Invalid(
            """
            import torch
            from torch.autograd import Variable

            z = Variable(torch.randn(64, 100), volatile=True)
            fake = netG(z)
            save(fake)
            """,
            fixed="""
            import torch
            from torch.autograd import Variable

            z = Variable(torch.randn(64, 100), volatile=True)
            with torch.no_grad():
                fake = netG(z)
            save(fake)
            """,
            line=5,
            column=8,
            message="`netG(...)` evaluates (on a volatile `Variable`, ignored since torch 0.4) with autograd recording",
        ),
        # `.eval()` chained on construction; a method of a module class that runs its forward
        Invalid(
            """
            import torch
            from models import Encoder

            def main(paths):
                enc = Encoder(64).eval()
                return [enc(load(p)).argmax(-1) for p in paths]
            """,
            fixed="""
            import torch
            from models import Encoder

            def main(paths):
                enc = Encoder(64).eval()
                with torch.no_grad():
                    return [enc(load(p)).argmax(-1) for p in paths]
            """,
            line=6,
            column=13,
            message="`enc(...)` evaluates (after `enc.eval()`) with autograd recording",
        ),
        Invalid(
            """
            import torch
            from torch import nn

            class Agent(nn.Module):
                def act(self, obs):
                    return self.actor(obs).argmax(-1)

            agent = Agent()
            agent.eval()
            for _ in range(100):
                obs = env.step(agent.act(obs))
            """,
            fixed="""
            import torch
            from torch import nn

            class Agent(nn.Module):
                def act(self, obs):
                    return self.actor(obs).argmax(-1)

            agent = Agent()
            agent.eval()
            with torch.no_grad():
                for _ in range(100):
                    obs = env.step(agent.act(obs))
            """,
            line=11,
            column=20,
            message="`agent.act(...)` evaluates (after `agent.eval()`) with autograd recording",
        ),
        # a global put in eval mode at module level, run by a function; a script that only loads and runs
        Invalid(
            """
            import torch

            model.load_state_dict(torch.load('m.pt'))
            model.eval()

            def classify(img):
                return model(img).argmax(1)
            """,
            fixed="""
            import torch

            model.load_state_dict(torch.load('m.pt'))
            model.eval()

            @torch.no_grad()
            def classify(img):
                return model(img).argmax(1)
            """,
            line=7,
            column=12,
            message="`model(...)` evaluates (`model` is in eval mode from module level) with autograd recording",
        ),
        Invalid(
            """
            import torch

            netG.load_state_dict(torch.load('g.pth'))
            for i in range(8):
                save(netG(torch.randn(64, 100)), i)
            """,
            fixed="""
            import torch

            netG.load_state_dict(torch.load('g.pth'))
            for i in range(8):
                with torch.no_grad():
                    save(netG(torch.randn(64, 100)), i)
            """,
            line=5,
            column=10,
            message="`netG(...)` evaluates (in a script that loads weights and never trains) with autograd recording",
        ),
        # a tensor trained by hand, read as a number by a helper of the training loop
        Invalid(
            """
            import torch

            def fit(w, loader, val_x, val_y):
                def val_loss():
                    return ((val_x @ w - val_y) ** 2).mean().item()

                for x, y in loader:
                    ((x @ w - y) ** 2).mean().backward()
                    w.data -= 0.1 * w.grad
                    print(val_loss())
            """,
            fixed="""
            import torch

            def fit(w, loader, val_x, val_y):
                @torch.no_grad()
                def val_loss():
                    return ((val_x @ w - val_y) ** 2).mean().item()

                for x, y in loader:
                    ((x @ w - y) ** 2).mean().backward()
                    w.data -= 0.1 * w.grad
                    print(val_loss())
            """,
            line=5,
            column=16,
            message="`val_loss` returns numbers computed from `w`, which requires grad, with autograd on",
        ),
        # trained by a function of the file, or by a framework's fit(...) handed the loader; then restored into a new module
        Invalid(
            """
            import torch

            def train_model(model, epochs):
                for epoch in range(epochs):
                    step(model)

            def step(model):
                loss(model).backward()

            model = Net()
            train_model(model, 10)
            print(model.forward(X))
            """,
            fixed="""
            import torch

            def train_model(model, epochs):
                for epoch in range(epochs):
                    step(model)

            def step(model):
                loss(model).backward()

            model = Net()
            train_model(model, 10)
            with torch.no_grad():
                print(model.forward(X))
            """,
            line=12,
            column=7,
            message="`model.forward(...)` evaluates (after the training loop) with autograd recording",
        ),
        Invalid(
            """
            import torch
            from torch import nn
            from torch.utils.data import DataLoader

            def create_net():
                return nn.Sequential(nn.Linear(2, 1))

            keras_model.fit(train_data=DataLoader(ds))
            clone = create_net()
            clone.load_state_dict(torch.load('ckpt.pt'))
            print(clone(X))
            """,
            fixed="""
            import torch
            from torch import nn
            from torch.utils.data import DataLoader

            def create_net():
                return nn.Sequential(nn.Linear(2, 1))

            keras_model.fit(train_data=DataLoader(ds))
            clone = create_net()
            clone.load_state_dict(torch.load('ckpt.pt'))
            with torch.no_grad():
                print(clone(X))
            """,
            line=11,
            column=7,
            message="`clone(...)` evaluates (after the training loop) with autograd recording",
        ),
        # a whole pickled model loaded and run by the script's functions; evaluation episodes every N steps
        Invalid(
            """
            import torch

            policy = torch.load('policy.pkl')

            def act(state):
                return policy(state).argmax().item()

            def run():
                while True:
                    state = env.step(act(state))

            run()
            """,
            fixed="""
            import torch

            policy = torch.load('policy.pkl')

            @torch.no_grad()
            def act(state):
                return policy(state).argmax().item()

            def run():
                while True:
                    state = env.step(act(state))

            run()
            """,
            line=6,
            column=12,
            message="`policy(...)` evaluates (in a script that loads weights and never trains) with autograd recording",
        ),
        Invalid(
            """
            import torch

            def test_env():
                done, total = False, 0
                while not done:
                    _, reward, done, _ = env.step(model(state).argmax())
                    total += reward
                return total

            for frame in range(10000):
                loss = model(batch()).mean()
                loss.backward()
                if frame % 100 == 0:
                    print([test_env() for _ in range(10)])
            """,
            fixed="""
            import torch

            @torch.no_grad()
            def test_env():
                done, total = False, 0
                while not done:
                    _, reward, done, _ = env.step(model(state).argmax())
                    total += reward
                return total

            for frame in range(10000):
                loss = model(batch()).mean()
                loss.backward()
                if frame % 100 == 0:
                    print([test_env() for _ in range(10)])
            """,
            line=6,
            column=39,
            message="`model(...)` evaluates (in `test_env`) with autograd recording",
        ),
        # an async function gets the finding but no fix
        Invalid(
            """
            import torch

            async def predict(model, x):
                return model(x)
            """,
            fixed=None,
            line=4,
            column=12,
            message="`model(...)` evaluates (in `predict`) with autograd recording",
        ),
    ]

    def __init__(self, ctx, options) -> None:
        super().__init__(ctx, options)
        self.calls: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        if type(node.func) in (cst.Name, cst.Attribute, cst.Subscript):
            self.calls.append(node)

    def finish(self) -> None:
        if not self.calls or not self.ctx.uses_torch:
            return
        evaluation = self.ctx.fact(Evaluation)
        forwards = {call for call in self.calls if evaluation.is_forward(call)}
        groups: dict[tuple, list[tuple[cst.Call, EvalScope]]] = {}
        twins = evaluation.twins
        for call in self.calls:
            # A helper runs a forward only if some call of the file is one: without any, the
            # question would build the call graph of a file that evaluates nothing.
            runs = call in forwards or (bool(forwards) and evaluation.runs_forward(call))
            if not runs and call in twins and (twin := self._twin_scope(call, evaluation)):
                groups.setdefault(twin.key, []).append((call, twin))
                continue
            if not runs and TrainedLeaves.exit_operand(call) is None:
                continue  # no forward, nor a Python value read off a tensor: `leaf_exit_scope`'s first test
            scope = self._scope(call, evaluation, runs)
            if scope is not None:
                groups.setdefault(scope.key, []).append((call, scope))
        for members in groups.values():
            self._check_scope(members)

    def _twin_scope(self, call: cst.Call, evaluation: Evaluation) -> EvalScope | None:
        """A call the file also makes under `no_grad` with the same flags, here with grad on."""
        scope = evaluation.twin_scope(call)
        if scope is None or self.ctx.fact(Grad).call_mode(call) is not GradMode.RECORDING:
            return None
        return scope

    def _scope(self, call: cst.Call, evaluation: Evaluation, runs: bool) -> EvalScope | None:
        """The evaluation scope of `call` when it is a forward pass recording autograd (`runs`:
        it runs one, itself or through a helper of the file)."""
        if runs:
            scope = evaluation.flag_scope(call) or evaluation.scope(call)
            if (
                scope is None
                or evaluation.is_frozen(evaluation.callee(call) or "")
                or evaluation.holds_no_parameters(call)
                or evaluation.turned_into_numpy(call)
            ):
                return None
        else:
            scope = evaluation.leaf_exit_scope(call)
            if scope is None:
                return None
        if self.ctx.fact(Grad).call_mode(call) is not GradMode.RECORDING:
            return None
        # Asked last: it reads the project's files for a method of that name.
        return None if runs and evaluation.method_turns_grad_on(call) else scope

    def _check_scope(self, members: list[tuple[cst.Call, EvalScope]]) -> None:
        grad = self.ctx.fact(Grad)
        first, scope = self._innermost(members)
        function = scope.function or self.ctx.fact(Evaluation).enclosing_function(first)
        if scope.function is not None:
            region: list[cst.CSTNode] = [scope.function.body]
        else:
            assert scope.block is not None  # a statement's scope names its block
            low, high = min(s.index for _, s in members), max(s.index for _, s in members)
            region = list(scope.block.body[low : high + 1])
        if scope.flagged:
            self._report_flagged(first, scope)
            return
        if grad.manages_grad(region) or (
            not scope.twin and grad.needs_grad([*region, *scope.after])
        ):
            return
        if function is not None and not scope.detached and grad.feeds_training(function):
            return
        if function is not None and self._called_only_without_grad_elsewhere(function):
            return
        if scope.function is not None:
            fix = self._decorate(scope.function)
        else:
            assert scope.block is not None
            fix = self._wrap(scope.block, self._in_cell_of(first, region))
        if fix is None:
            alias = self.ctx.torch_alias(
                scope.function if scope.function is not None else scope.block
            )[0]
            fix = self.make_fix(f"Run it under `{alias}.no_grad()`", Applicability.DISPLAY_ONLY)
        evaluation = self.ctx.fact(Evaluation)
        if scope.twin or evaluation.is_forward(first) or evaluation.runs_forward(first):
            message = f"`{self.ctx.code(first.func)}(...)` evaluates ({scope.reason}) with autograd recording"
        else:
            assert function is not None  # a scope without a forward is a function's
            message = f"`{function.name.value}` {scope.reason}, with autograd on"
        self.report(first, message, fix)

    def _report_flagged(self, first: cst.Call, scope: EvalScope) -> None:
        """A loop that trains under a flag and evaluates without it: the training calls need the
        graph, so no decorator or wrap fits; grad follows the flag instead."""
        alias = self.ctx.torch_alias(scope.function)[0]
        fix = self.make_fix(
            f"Run the loop under `{alias}.set_grad_enabled(...)` of the training flag",
            Applicability.DISPLAY_ONLY,
        )
        message = (
            f"`{self.ctx.code(first.func)}(...)` evaluates ({scope.reason}) with autograd recording"
        )
        self.report(first, message, fix)

    def _innermost(self, members: list[tuple[cst.Call, EvalScope]]) -> tuple[cst.Call, EvalScope]:
        """The first forward that holds no other: the model in `loss(net(x), y)`, not its
        criterion; a module's own forward before a call of a helper that runs one."""
        calls = {call for call, _ in members}
        evaluation = self.ctx.fact(Evaluation)
        direct = [(c, s) for c, s in members if evaluation.is_forward(c)]
        for call, scope in direct or members:
            if not any(other is not call and call in self.ctx.ancestors(other) for other in calls):
                return call, scope
        return members[0]

    def _called_only_without_grad_elsewhere(self, function: cst.FunctionDef) -> bool:
        """A module-level function or method which the project calls only under
        `no_grad`/`inference_mode` (at the call or further up, through this file's own calls
        of it too, which the project index reads alike): its callers chose the grad mode
        already. A `Step.infer` that the file's `Net.infer` runs in a loop, and another
        module runs `net.infer(...)` under `no_grad`."""
        grad = self.ctx.fact(Grad)
        owner = grad.enclosing_class(function)
        key = f"{owner.name.value}.{function.name.value}" if owner else function.name.value
        if self.ctx.project is None or not isinstance(grad.parent(owner or function), cst.Module):
            return False
        path = self.ctx.absolute_path
        return self.ctx.project.always_called_without_grad(path, key) or (
            owner is not None and self.ctx.project.handed_over_without_grad(path, key)
        )

    # -- fixes ----------------------------------------------------------------------------
    def _in_cell_of(self, first: cst.Call, region: list[cst.CSTNode]) -> list[cst.CSTNode]:
        """The statements of `region` in the notebook cell that holds `first` (all of them in a
        Python file): a wrap stays in one cell, and the next pass wraps the next cell's."""
        cell = self.ctx.cell_of(first)
        return [s for s in region if self.ctx.cell_of(s) == cell]

    def _decorate(self, function: cst.FunctionDef) -> Fix | None:
        if function.asynchronous is not None:
            return None
        alias, import_edit = self.ctx.torch_alias(function)
        at = self.ctx.start(function)
        indent = self.ctx.line(at.row)[: at.column - 1]
        edit = Edit(at, at, f"@{alias}.no_grad(){self.ctx.module.default_newline}{indent}")
        return self.make_fix(
            f"Decorate `{function.name.value}` with `@{alias}.no_grad()`",
            Applicability.UNSAFE,
            import_edit,
            edit,
            writes="`torch.no_grad()`",
        )

    def _wrap(self, block: Block, region: list[cst.CSTNode]) -> Fix | None:
        statements = [
            s for s in region if isinstance(s, cst.SimpleStatementLine | cst.BaseCompoundStatement)
        ]
        if len(statements) != len(region) or any(self._suspends(s) for s in statements):
            return None
        alias, import_edit = self.ctx.torch_alias(block)
        first = statements[0]
        wrapped = cst.With(
            items=[cst.WithItem(cst.parse_expression(f"{alias}.no_grad()"))],
            body=cst.IndentedBlock(body=[first.with_changes(leading_lines=()), *statements[1:]]),
            leading_lines=first.leading_lines,
        )
        low = next(i for i, s in enumerate(block.body) if s is first)
        body = [*block.body[:low], wrapped, *block.body[low + len(statements) :]]
        module = self.ctx.module
        new = replaced(module, block, block.with_changes(body=body), self.ctx.parents)
        edit = self._changed_text(new.code)
        return self.make_fix(
            f"Wrap the evaluation code in `with {alias}.no_grad():`",
            Applicability.UNSAFE,
            import_edit,
            edit,
            writes="`torch.no_grad()`",
        )

    def _changed_text(self, new_code: str) -> Edit:
        """The one edit turning the file's text into `new_code`: the span between their common ends."""
        old = self.ctx.source
        limit = min(len(old), len(new_code))
        head = 0
        while head < limit and old[head] == new_code[head]:
            head += 1
        tail = 0
        while (
            tail < limit - head and old[len(old) - 1 - tail] == new_code[len(new_code) - 1 - tail]
        ):
            tail += 1
        return Edit(
            _position(old, head),
            _position(old, len(old) - tail),
            new_code[head : len(new_code) - tail],
        )

    def _suspends(self, statement: cst.CSTNode) -> bool:
        """A yield or await outside nested functions: a with-block would leak the grad mode."""
        found = find_all(statement, (cst.Yield, cst.Await))
        grad = self.ctx.fact(Grad)
        owner = grad.enclosing_function(statement)
        return any(grad.enclosing_function(node) is owner for node in found)


def _position(text: str, at: int) -> Position:
    """The 1-based row and column of offset `at` in `text`."""
    line_start = text.rfind("\n", 0, at) + 1
    return Position(text.count("\n", 0, at) + 1, at - line_start + 1)
