"""TL001 eval-without-no-grad."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import libcst.matchers as m

from torchlint.analysis.evaluation import EvalScope, Evaluation
from torchlint.analysis.grad import Block, Grad, GradMode
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
functions. `.eval()` chained on construction (`enc = Encoder(d).eval()`) counts as a switch.
A call counts as a forward pass when the callee is a module
built in the file (also through a function of the file that returns one, `net = create_net()`,
or loaded whole with `torch.load(path)` without `weights_only`; not a criterion such as `nn.CrossEntropyLoss()` or a class named `...Loss`:
its graph hangs off the model's forward, which gets the finding), the object `.eval()` is called on, or named like one (`model`, `net`,
`encoder`, `backbone`...); a call of a method of a module class of the file that itself runs
a forward (`agent.act(obs)`) counts too.

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
  itself (a Hugging Face model's `generate`);
- grad is switched explicitly (`torch.enable_grad()`, `set_grad_enabled(flag)`, a context
  manager of the file's own that does);
- the evaluation code needs gradients: it calls `backward()` or `torch.autograd.grad`, sets
  `requires_grad`, steps an optimizer, or its result feeds a `backward()` (fine-tuning with
  frozen batch norm, adversarial examples, test-time adaptation): a call in a loop body or
  function that runs `backward()` counts as feeding it, unless a periodic guard whose branch
  runs no backward holds it (`if step % 100 == 0: rewards.append(test_env())`);
- the module's parameters are frozen with `requires_grad_(False)`;
- a framework or wrapper disables grad itself: Lightning's `validation_step`/`test_step`/
  `predict_step`, fairseq's `valid_step`, the `prediction_step`/`evaluate` of a Hugging Face
  `Trainer` subclass, ultralytics `YOLO`, transformers `pipeline`;
- the grad mode belongs to the callers: methods of a module class of the file (its API:
  `predict`, `evaluate_actions`) unless they switch it to eval mode, loop over forwards
  (generation) or take the result out of autograd (`.item()`, `.numpy()`); a module's `forward`
  and the methods it calls; helpers called only from other evaluation functions; overrides
  that delegate to `super()`; shape-probing forwards in `__init__`; a module-level function
  the file never calls whose every call in the project's other files runs under `no_grad` or
  `inference_mode` (found by the project index, also in a single-file run);
- the file is a unit-test module, or does not use torch (directly or through a star import of a
  project module that imports it).

Evaluation must repeat to be worth a finding: a forward in a loop or comprehension, in a
function a framework runs every step or epoch, or in a function that may run many times (any
function, unless it is a `main` or every call of it in the file runs once). A single forward
outside any loop in code that runs once (a library's `__main__` demo, a shape check, a
one-image `main`) is left alone, and so is a forward in code that exports or traces the module
(`torch.onnx.export`, `torch.jit.trace`: a warm-up). A forward on evaluation data or after
training in the same run, or in a script that only loads weights and runs them, is still
reported when it runs once: it is the workload (a whole split, the images a script generates).

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
        "import torch\n\ndef train_model(model):\n    for x in loader:\n        model(x).sum().backward()\n\n"
        "train_model(model)\nprobe = Net()\nprint(probe(torch.zeros(1, 3)).shape)\n",
        "import torch\n\nstate = torch.load('m.pt', weights_only=True)\nfor x in loader:\n    model(x).sum().backward()\n",
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
        "import torch\n\ndef evaluate(model, loader):\n    model.eval()\n    with torch.no_grad():\n        for x, _ in loader:\n            model(x)\n",
        "import torch as T\n\n@T.inference_mode()\ndef predict(model, x):\n    return model(x)\n",
        "from torch import no_grad\n\n@no_grad()\ndef validate(net, x):\n    return net(x)\n",
        "import torch\nmodel.eval()\nwith torch.set_grad_enabled(False):\n    for x in val_loader:\n        model(x)\n",
        "import torch\nmodel.eval()\nwith torch.autocast('cuda'), torch.inference_mode():\n    out = model(x)\n",
        # only called from a no_grad context in the same file
        "import torch\n\ndef run_validation(model, loader):\n    return [model(x) for x, _ in loader]\n\n"
        "def fit(model, loader):\n    with torch.no_grad():\n        run_validation(model, loader)\n",
        # the scope needs gradients: fine-tuning, adversarial examples
        "import torch\n\ndef evaluate(model, x, opt):\n    loss = model(x).entropy().mean()\n    loss.backward()\n    opt.step()\n",
        "import torch\n\ndef evaluate_adversarial(model, x, y):\n    model.eval()\n    x.requires_grad_(True)\n"
        "    loss = torch.nn.functional.cross_entropy(model(x), y)\n    grad, = torch.autograd.grad(loss, x)\n    return model(x + 0.1 * grad.sign())\n",
        # fine-tuning with frozen batch norm: backward comes after the eval-mode forward
        "import torch\n\ndef finetune(model, loader, opt):\n    for x, y in loader:\n        model.eval()\n        out = model(x)\n"
        "        loss = (out - y).abs().mean()\n        loss.backward()\n        opt.step()\n",
        # its result feeds a backward pass in the same file
        "import torch\n\ndef predict(model, x):\n    return model(x)\n\nfor x, y in train_loader:\n"
        "    loss = (predict(model, x) - y).pow(2).mean()\n    loss.backward()\n",
        # grad switched explicitly
        "import torch\n\ndef predict(model, x):\n    with torch.enable_grad():\n        return model(x)\n",
        "import torch\nfor phase in ['train', 'val']:\n    for x, y in loaders[phase]:\n"
        "        with torch.set_grad_enabled(phase == 'train'):\n            out = model(x)\n",
        "import torch\ntorch.set_grad_enabled(False)\nmodel.eval()\nprint(model(x))\n",
        # a context manager of the file's own that sets the grad mode
        "import torch\n\nclass Runner:\n    def _mode(self, training):\n        return torch.set_grad_enabled(training)\n\n"
        "    def predict(self, x):\n        with self._mode(False):\n            return self.model(x)\n",
        # a module's own API method: callers choose the grad mode (a policy's evaluate_actions trains)
        "import torch\nfrom torch import nn\n\nclass Policy(nn.Module):\n    def evaluate_actions(self, obs, actions):\n"
        "        return self.value_net(obs), self.action_net(obs).log_softmax(-1)\n",
        # a step of a forward, an override delegating to its base
        "import torch\nfrom torch import nn\n\nclass Block(nn.Module):\n    def predict(self, h):\n        return self.head_net(h)\n\n"
        "    def forward(self, h):\n        return self.predict(h)\n",
        "import torch\nfrom base import Generator\n\nclass Sampler(Generator):\n    def generate(self, ids):\n"
        "        embeds = self.encoder(ids)\n        return super().generate(embeds)\n",
        # wrappers that already run without grad; callables that are not modules
        "import torch\nfrom ultralytics import YOLO\n\nmodel = YOLO('yolo.pt')\n\ndef predict(frame):\n    return model(frame)\n",
        "import torch\nfrom transformers import AutoTokenizer\n\ntokenizer = AutoTokenizer.from_pretrained('t5')\nmodel.eval()\nids = tokenizer(text)\n",
        "import torch\n\ndef evaluate(trainer, model):\n    trainer.wrap_model(model)\n    return solver.model()\n",
        # frozen parameters record no graph
        "import torch\nteacher.requires_grad_(False)\nteacher.eval()\nfor x in val_loader:\n    teacher(x)\n",
        # training code, not evaluation
        "import torch\n\ndef train(model, loader):\n    model.train()\n    for x, y in loader:\n        model(x)\n",
        # not a forward pass: a method, a class, an imported function
        "import torch\n\ndef evaluate(model, x):\n    return model.predict(x)\n",
        "import torch\n\ndef predict(x):\n    return Model(x)\n",
        "import torch\nfrom utils import model\n\ndef validate(x):\n    return model(x)\n",
        # `valid_lens` are valid lengths, not validation data
        "import torch\n\ndef batch_loss(net, loss, tokens, valid_lens_x):\n    return loss(net(tokens, valid_lens_x.reshape(-1)))\n",
        # a shape probe on a tensor the file builds; a forward after training that trains again (meta-learning)
        "import torch\n\ntest_x = torch.zeros(1, 3, 32, 32)\nprint(model(test_x).shape)\n",
        "import torch\n\nfor x, y in loader:\n    net(x).sum().backward()\n    opt.step()\nadapted = net(test_x)\nadapted.sum().backward()\n",
        # a criterion is not a model: the finding goes to the model's forward, once
        "import torch\nfrom torch import nn\n\nloss_function = nn.CrossEntropyLoss()\nfor x, y in loader:\n"
        "    loss_function(net(x), y).backward()\n    opt.step()\nprint(loss_function(preds_val, y_val).item())\n",
        # a module built after the training loop is a new, untrained one: a shape probe
        "import torch\nfrom torch import nn\n\nfor x, y in loader:\n    net(x).sum().backward()\n    opt.step()\n"
        "net = nn.Sequential(nn.Linear(4, 2))\nprint(net(img).shape)\n",
        # a method of a module that runs no forward; a global switched back to training in a function
        "import torch\nfrom torch import nn\n\nclass RNN(nn.Module):\n    def init_hidden(self, n):\n        return torch.zeros(1, n, 8)\n\n"
        "rnn = RNN()\nrnn.eval()\nh = rnn.init_hidden(4)\n",
        "import torch\n\nmodel.eval()\n\ndef run(x, y):\n    model.train()\n    return model(x)\n",
        # a script that loads weights: its module methods belong to their callers, and it may train
        "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def restore(self, path):\n        self.load_state_dict(torch.load(path))\n\n"
        "    def embed(self, x):\n        return self.encoder(x)\n",
        "import torch\n\nnet.load_state_dict(torch.load('init.pt'))\nloss = net(x).sum()\nloss.backward()\n",
        # a library module: a helper its model's forward calls is a step of that forward
        "import torch\nfrom torch import nn\n\ndef aggregate(pooled, classifier):\n    return classifier(pooled)\n\n"
        "class Head(nn.Module):\n    def forward(self, x):\n        return aggregate(x, self.classifier)\n\n"
        "def build(name):\n    return Head.from_pretrained(name)\n",
        # a library file that loads weights: functions only other files call, a function named like a model
        "import torch\n\ndef efficientnet(width):\n    return [width] * 4\n\ndef load_weights(model, path):\n"
        "    model.load_state_dict(torch.load(path))\n\ndef params(name):\n    return efficientnet(width=2)\n\n"
        "def features(model, x):\n    return model(x)\n",
        # a dummy forward in a constructor, probing shapes
        "import torch\nfrom torch import nn\n\nclass Det(nn.Module):\n    def __init__(self, backbone):\n        super().__init__()\n"
        "        self.backbone = backbone\n        self.backbone.eval()\n        self.stride = 256 / self.backbone(torch.zeros(1, 3, 256, 256)).shape[-1]\n",
        # a Lightning hook: the trainer runs it without grad
        "import torch\nimport pytorch_lightning as pl\n\nclass Lit(pl.LightningModule):\n    def validation_step(self, batch, i):\n        return self.model(batch)\n",
        "import torch\nfrom lightning import LightningModule\n\nclass Base(LightningModule):\n    pass\n\nclass Lit(Base):\n"
        "    def test_step(self, batch, i):\n        return self.model(batch)\n",
        # fairseq's trainer and Hugging Face's Trainer run these hooks without grad
        "import torch\nfrom fairseq.tasks import FairseqTask\n\nclass Task(FairseqTask):\n    def valid_step(self, sample, model, criterion):\n"
        "        model.eval()\n        return model(sample)\n",
        "import torch\nfrom transformers import Trainer\n\nclass MyTrainer(Trainer):\n    def prediction_step(self, model, inputs, only_loss):\n"
        "        return model(**inputs)\n",
        # a tensor trained by hand: scaled or reduced alone, logged in the training step, returned as a tensor
        "import torch\n\nw = torch.randn(3, requires_grad=True)\n\ndef size():\n    return w.norm().item()\n\n"
        "def loss_of(x, y):\n    return ((x @ w - y) ** 2).mean()\n",
        "import torch\n\ndef fit(w, loader):\n    for x, y in loader:\n        loss = ((x @ w - y) ** 2).mean()\n"
        "        loss.backward()\n        step(w)\n        print(loss.item())\n",
        # unit tests
        "import torch\nimport pytest\n\ndef test_forward():\n    model.eval()\n    assert model(torch.ones(1)).shape == (1,)\n",
        # no torch at all
        "def evaluate(model, x):\n    return model(x)\n",
    ]
    invalid = [
        Invalid(
            "import torch\n\ndef evaluate(model, loader):\n    model.eval()\n    return [model(x) for x, _ in loader]\n",
            fixed="import torch\n\n@torch.no_grad()\ndef evaluate(model, loader):\n    model.eval()\n    return [model(x) for x, _ in loader]\n",
        ),
        Invalid(
            "import torch as T\n\nclass Runner:\n    @staticmethod\n    def predict(net, x):\n        return net(x).softmax(-1)\n",
            fixed="import torch as T\n\nclass Runner:\n    @staticmethod\n    @T.no_grad()\n    def predict(net, x):\n        return net(x).softmax(-1)\n",
        ),
        Invalid(
            _TRAIN_AND_VALIDATE,
            fixed=_TRAIN_AND_VALIDATE.replace(
                "    # validation\n    for x, y in val_loader:\n        correct += (model(x).argmax(1) == y).sum().item()\n",
                "    # validation\n    with torch.no_grad():\n        for x, y in val_loader:\n            correct += (model(x).argmax(1) == y).sum().item()\n",
            ),
        ),
        # `from torch import nn` only: the fix imports torch; one finding for two forwards
        Invalid(
            "from torch import nn\n\nnet = nn.Sequential(nn.Linear(4, 2))\n\ndef show(x1, x2):\n    net.eval()\n"
            "    a = net(x1)\n    b = net(x2)  # second\n    print(a, b)\n",
            fixed="from torch import nn\nimport torch\n\nnet = nn.Sequential(nn.Linear(4, 2))\n\ndef show(x1, x2):\n    net.eval()\n"
            "    with torch.no_grad():\n        a = net(x1)\n        b = net(x2)  # second\n    print(a, b)\n",
        ),
        # a loop over a test loader, a module bound in the file under a neutral name
        Invalid(
            "import torch\n\nclass Net(torch.nn.Module):\n    pass\n\nclf = Net()\nfor xb, yb in test_dl:\n    preds = clf(xb)\n    total += (preds.argmax(1) == yb).sum()\n",
            fixed="import torch\n\nclass Net(torch.nn.Module):\n    pass\n\nclf = Net()\nwith torch.no_grad():\n    for xb, yb in test_dl:\n"
            "        preds = clf(xb)\n        total += (preds.argmax(1) == yb).sum()\n",
        ),
        # a method of a module that switches itself to eval mode and calls itself
        Invalid(
            "import torch.nn as nn\n\nclass Classifier(nn.Module):\n    def labels(self, x):\n        self.eval()\n        return self(x).argmax(-1)\n",
            fixed="import torch.nn as nn\nimport torch\n\nclass Classifier(nn.Module):\n    def labels(self, x):\n        self.eval()\n"
            "        with torch.no_grad():\n            return self(x).argmax(-1)\n",
        ),
        # a predictor wrapping a model
        Invalid(
            "import torch\n\nclass Predictor:\n    def __init__(self, model):\n        self.model = model\n\n    def predict(self, x):\n"
            "        return self.model(x).softmax(-1)\n",
            fixed="import torch\n\nclass Predictor:\n    def __init__(self, model):\n        self.model = model\n\n    @torch.no_grad()\n"
            "    def predict(self, x):\n        return self.model(x).softmax(-1)\n",
        ),
        # a with-block that is not about grad does not count; comments and strings keep their text
        Invalid(
            'import torch\nself.model.eval()\nwith open(path) as f:\n    for line in f:\n        """keep\n    this"""\n        # encode\n        out = self.model(encode(line))\n',
            fixed='import torch\nself.model.eval()\nwith torch.no_grad():\n    with open(path) as f:\n        for line in f:\n            """keep\n    this"""\n'
            "            # encode\n            out = self.model(encode(line))\n",
        ),
        # called both from no_grad code and without it: still a finding
        Invalid(
            "import torch\n\ndef generate(model, z):\n    return model(z)\n\nwith torch.no_grad():\n    generate(model, z)\nsamples = generate(model, z)\n",
            fixed="import torch\n\n@torch.no_grad()\ndef generate(model, z):\n    return model(z)\n\nwith torch.no_grad():\n    generate(model, z)\nsamples = generate(model, z)\n",
        ),
        # a helper only called by evaluation code is covered by the caller's finding
        Invalid(
            "import torch\n\ndef predict(model, x):\n    return model(x)\n\ndef evaluate(model, xs):\n    first = model(xs[0])\n"
            "    return [first] + [predict(model, x) for x in xs[1:]]\n",
            fixed="import torch\n\ndef predict(model, x):\n    return model(x)\n\n@torch.no_grad()\ndef evaluate(model, xs):\n    first = model(xs[0])\n"
            "    return [first] + [predict(model, x) for x in xs[1:]]\n",
        ),
        # `predict_step` outside Lightning is the file's own; `forward_*` methods are forward passes too
        Invalid(
            "import torch\n\nclass Seq2Seq(Base):\n    def predict_step(self, batch):\n        feats = self.encoder.forward_features(batch)\n"
            "        return self.decoder(feats).argmax(-1)\n",
            fixed="import torch\n\nclass Seq2Seq(Base):\n    @torch.no_grad()\n    def predict_step(self, batch):\n"
            "        feats = self.encoder.forward_features(batch)\n        return self.decoder(feats).argmax(-1)\n",
        ),
        # a module's own generation loop: its result never meets a backward pass
        Invalid(
            "import torch\nfrom torch import nn\n\nclass LM(nn.Module):\n    def forward(self, idx):\n        return self.net(idx)\n\n"
            "    def generate(self, idx, steps):\n        for _ in range(steps):\n            idx = torch.cat([idx, self(idx)[:, -1:].argmax(-1)], 1)\n"
            "        return idx\n",
            fixed="import torch\nfrom torch import nn\n\nclass LM(nn.Module):\n    def forward(self, idx):\n        return self.net(idx)\n\n"
            "    @torch.no_grad()\n    def generate(self, idx, steps):\n        for _ in range(steps):\n"
            "            idx = torch.cat([idx, self(idx)[:, -1:].argmax(-1)], 1)\n        return idx\n",
        ),
        # a forward on test data after the training loop, and one inside it
        Invalid(
            "import torch\n\nfor x, y in loader:\n    loss = (net(x) - y).pow(2).mean()\n    loss.backward()\n    opt.step()\n"
            "preds = net(test_x)\nprint(preds)\n",
            fixed="import torch\n\nfor x, y in loader:\n    loss = (net(x) - y).pow(2).mean()\n    loss.backward()\n    opt.step()\n"
            "with torch.no_grad():\n    preds = net(test_x)\nprint(preds)\n",
        ),
        Invalid(
            "import torch\n\nfor x, y in loader:\n    net(x).sum().backward()\n    opt.step()\n    out = net(test_x)\n    print(out)\n",
            fixed="import torch\n\nfor x, y in loader:\n    net(x).sum().backward()\n    opt.step()\n"
            "    with torch.no_grad():\n        out = net(test_x)\n    print(out)\n",
        ),
        # a volatile Variable: pre-0.4 code whose no-grad flag torch now ignores
        Invalid(
            "import torch\nfrom torch.autograd import Variable\n\nz = Variable(torch.randn(64, 100), volatile=True)\nfake = netG(z)\nsave(fake)\n",
            fixed="import torch\nfrom torch.autograd import Variable\n\nz = Variable(torch.randn(64, 100), volatile=True)\n"
            "with torch.no_grad():\n    fake = netG(z)\nsave(fake)\n",
        ),
        # `.eval()` chained on construction; a method of a module class that runs its forward
        Invalid(
            "import torch\nfrom models import Encoder\n\ndef main(paths):\n    enc = Encoder(64).eval()\n    return [enc(load(p)).argmax(-1) for p in paths]\n",
            fixed="import torch\nfrom models import Encoder\n\ndef main(paths):\n    enc = Encoder(64).eval()\n"
            "    with torch.no_grad():\n        return [enc(load(p)).argmax(-1) for p in paths]\n",
        ),
        Invalid(
            "import torch\nfrom torch import nn\n\nclass Agent(nn.Module):\n    def act(self, obs):\n        return self.actor(obs).argmax(-1)\n\n"
            "agent = Agent()\nagent.eval()\nfor _ in range(100):\n    obs = env.step(agent.act(obs))\n",
            fixed="import torch\nfrom torch import nn\n\nclass Agent(nn.Module):\n    def act(self, obs):\n        return self.actor(obs).argmax(-1)\n\n"
            "agent = Agent()\nagent.eval()\nwith torch.no_grad():\n    for _ in range(100):\n        obs = env.step(agent.act(obs))\n",
        ),
        # a global put in eval mode at module level, run by a function; a script that only loads and runs
        Invalid(
            "import torch\n\nmodel.load_state_dict(torch.load('m.pt'))\nmodel.eval()\n\ndef classify(img):\n    return model(img).argmax(1)\n",
            fixed="import torch\n\nmodel.load_state_dict(torch.load('m.pt'))\nmodel.eval()\n\n@torch.no_grad()\ndef classify(img):\n"
            "    return model(img).argmax(1)\n",
        ),
        Invalid(
            "import torch\n\nnetG.load_state_dict(torch.load('g.pth'))\nfor i in range(8):\n    save(netG(torch.randn(64, 100)), i)\n",
            fixed="import torch\n\nnetG.load_state_dict(torch.load('g.pth'))\nfor i in range(8):\n    with torch.no_grad():\n        save(netG(torch.randn(64, 100)), i)\n",
        ),
        # a tensor trained by hand, read as a number by a helper of the training loop
        Invalid(
            "import torch\n\ndef fit(w, loader, val_x, val_y):\n    def val_loss():\n        return ((val_x @ w - val_y) ** 2).mean().item()\n\n"
            "    for x, y in loader:\n        ((x @ w - y) ** 2).mean().backward()\n        w.data -= 0.1 * w.grad\n        print(val_loss())\n",
            fixed="import torch\n\ndef fit(w, loader, val_x, val_y):\n    @torch.no_grad()\n    def val_loss():\n"
            "        return ((val_x @ w - val_y) ** 2).mean().item()\n\n"
            "    for x, y in loader:\n        ((x @ w - y) ** 2).mean().backward()\n        w.data -= 0.1 * w.grad\n        print(val_loss())\n",
        ),
        # trained by a function of the file, or by a framework's fit(...) handed the loader; then restored into a new module
        Invalid(
            "import torch\n\ndef train_model(model, epochs):\n    for epoch in range(epochs):\n        step(model)\n\n"
            "def step(model):\n    loss(model).backward()\n\nmodel = Net()\ntrain_model(model, 10)\nprint(model.forward(X))\n",
            fixed="import torch\n\ndef train_model(model, epochs):\n    for epoch in range(epochs):\n        step(model)\n\n"
            "def step(model):\n    loss(model).backward()\n\nmodel = Net()\ntrain_model(model, 10)\nwith torch.no_grad():\n    print(model.forward(X))\n",
        ),
        Invalid(
            "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader\n\ndef create_net():\n    return nn.Sequential(nn.Linear(2, 1))\n\n"
            "keras_model.fit(train_data=DataLoader(ds))\nclone = create_net()\nclone.load_state_dict(torch.load('ckpt.pt'))\nprint(clone(X))\n",
            fixed="import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader\n\ndef create_net():\n    return nn.Sequential(nn.Linear(2, 1))\n\n"
            "keras_model.fit(train_data=DataLoader(ds))\nclone = create_net()\nclone.load_state_dict(torch.load('ckpt.pt'))\n"
            "with torch.no_grad():\n    print(clone(X))\n",
        ),
        # a whole pickled model loaded and run by the script's functions; evaluation episodes every N steps
        Invalid(
            "import torch\n\npolicy = torch.load('policy.pkl')\n\ndef act(state):\n    return policy(state).argmax().item()\n\n"
            "def run():\n    while True:\n        state = env.step(act(state))\n\nrun()\n",
            fixed="import torch\n\npolicy = torch.load('policy.pkl')\n\n@torch.no_grad()\ndef act(state):\n    return policy(state).argmax().item()\n\n"
            "def run():\n    while True:\n        state = env.step(act(state))\n\nrun()\n",
        ),
        Invalid(
            "import torch\n\ndef test_env():\n    done, total = False, 0\n    while not done:\n        _, reward, done, _ = env.step(model(state).argmax())\n"
            "        total += reward\n    return total\n\nfor frame in range(10000):\n    loss = model(batch()).mean()\n    loss.backward()\n"
            "    if frame % 100 == 0:\n        print([test_env() for _ in range(10)])\n",
            fixed="import torch\n\n@torch.no_grad()\ndef test_env():\n    done, total = False, 0\n    while not done:\n"
            "        _, reward, done, _ = env.step(model(state).argmax())\n        total += reward\n    return total\n\n"
            "for frame in range(10000):\n    loss = model(batch()).mean()\n    loss.backward()\n"
            "    if frame % 100 == 0:\n        print([test_env() for _ in range(10)])\n",
        ),
        # an async function gets the finding but no fix
        Invalid("import torch\n\nasync def predict(model, x):\n    return model(x)\n", fixed=None),
    ]

    def __init__(self, ctx, options) -> None:
        super().__init__(ctx, options)
        self.calls: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name | cst.Attribute):
            self.calls.append(node)

    def finish(self) -> None:
        if not self.calls or not self.ctx.uses_torch:
            return
        evaluation = self.ctx.fact(Evaluation)
        groups: dict[tuple, list[tuple[cst.Call, EvalScope]]] = {}
        for call in self.calls:
            scope = self._scope(call, evaluation)
            if scope is not None:
                groups.setdefault(scope.key, []).append((call, scope))
        for members in groups.values():
            self._check_scope(members)

    def _scope(self, call: cst.Call, evaluation: Evaluation) -> EvalScope | None:
        """The evaluation scope of `call` when it is a forward pass recording autograd."""
        if evaluation.is_forward(call):
            scope = evaluation.scope(call)
            if scope is None or evaluation.is_frozen(evaluation.callee(call) or ""):
                return None
        else:
            scope = evaluation.leaf_exit_scope(call)
            if scope is None:
                return None
        return scope if self.ctx.fact(Grad).call_mode(call) is GradMode.RECORDING else None

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
        if grad.needs_grad([*region, *scope.after]) or grad.manages_grad(region):
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
        if self.ctx.fact(Evaluation).is_forward(first):
            message = f"`{self.ctx.code(first.func)}(...)` evaluates ({scope.reason}) with autograd recording"
        else:
            assert function is not None  # a scope without a forward is a function's
            message = f"`{function.name.value}` {scope.reason}, with autograd on"
        self.report(first, message, fix)

    def _innermost(self, members: list[tuple[cst.Call, EvalScope]]) -> tuple[cst.Call, EvalScope]:
        """The first forward that holds no other: the model in `loss(net(x), y)`, not its criterion."""
        calls = {call for call, _ in members}
        for call, scope in members:
            if not any(other is not call and call in self.ctx.ancestors(other) for other in calls):
                return call, scope
        return members[0]

    def _called_only_without_grad_elsewhere(self, function: cst.FunctionDef) -> bool:
        """A module-level function this file never calls, which the project's other files call
        only under `no_grad`/`inference_mode`: its callers chose the grad mode already."""
        grad = self.ctx.fact(Grad)
        if (
            self.ctx.project is None
            or not isinstance(grad.parent(function), cst.Module)
            or grad.call_sites(function) != []
        ):
            return False
        return self.ctx.project.always_called_without_grad(Path(self.ctx.path), function.name.value)

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
        new = (
            module.with_changes(body=body)
            if block is module
            else module.deep_replace(block, block.with_changes(body=body))
        )
        assert isinstance(new, cst.Module)  # the tree with the block replaced
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
        found = m.findall(statement, m.Yield() | m.Await())
        grad = self.ctx.fact(Grad)
        owner = grad.enclosing_function(statement)
        return any(grad.enclosing_function(node) is owner for node in found)


def _position(text: str, at: int) -> Position:
    """The 1-based row and column of offset `at` in `text`."""
    line_start = text.rfind("\n", 0, at) + 1
    return Position(text.count("\n", 0, at) + 1, at - line_start + 1)
