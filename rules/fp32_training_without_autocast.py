"""TL113 fp32-training-without-autocast."""

from __future__ import annotations

from torchlint.analysis.numerics import Numerics
from torchlint.analysis.text import may_train, may_train_in_float32, may_use_cuda
from torchlint.diagnostics import Applicability, FixAvailability
from torchlint.rule import Invalid, Rule, Valid

_AUTOCAST_SINCE = (1, 6)  # `torch.cuda.amp.autocast`; `torch.autocast` came with 1.10


class Fp32TrainingWithoutAutocast(Rule):
    code = "TL113"
    name = "fp32-training-without-autocast"
    summary = "A GPU training loop runs forward and backward in float32, with no `torch.autocast`"
    preview = True
    gpu_only = True  # half-precision tensor cores are a GPU's
    fix_availability = FixAvailability.DISPLAY_ONLY
    text_tests = (may_train, may_use_cuda, may_train_in_float32)
    docs = """
## What it does
Flags a CUDA training script (a training loop that runs `backward()` or an optimizer step on
every batch, in a file with an `if __name__ == "__main__":` block or module-level training, that
puts its work on a CUDA device) in which nothing runs in reduced precision: no
`torch.autocast`/`torch.amp.autocast`/`torch.cuda.amp.autocast` anywhere, no model converted
with `.half()`, `.bfloat16()` or `.to(torch.bfloat16)`, no `GradScaler`, and no precision
option of a framework. The model must be built in the file and be big enough for half-precision
tensor cores to matter: a torchvision, timm or Hugging Face model, a factory named like a CNN
family (`resnet50()`), or a layer whose size is written out (or bound once to a number) and
large: 2048 x 2048 multiply-adds per sample for a linear layer, a hidden size of 1024 for a
recurrent one, 256 output channels for a 2D convolution, a `d_model` of 512 for attention. An XOR net, a logistic regression or a small MLP on MNIST, LeNet
or a 64-unit RL policy gains nothing; a model sized only by parameters or a config, or built in
another module, is not known to be big, and the rule stays silent. It reports once per file, on
the training loop's `backward()`. A script whose optimizers all take a list of tensors
(`Adam([image])`, also concatenated with the values of a dict of tensors, `Adam([w] +
list(noise_bufs.values()))`: style transfer, feature visualisation, latent projection)
optimises an input through a frozen network, not a model, and is left alone.

The script's project modules count too: an `autocast` in a module the script imports (a model
whose `forward` runs under autocast, a training helper) silences the rule. So does any word
that may choose the precision elsewhere: an `amp` or `fp16`/`bf16` option, apex, a trainer's
`precision=16`, accelerate, DeepSpeed or Lightning (their precision comes from their own
config or command line). Library modules, unit tests, CPU-only scripts and files without a
training loop are not flagged. The rule needs a target torch of at least 1.6, where autocast
appeared (`torch.autocast` itself came with 1.10, bfloat16 on CUDA with 1.10).

## Why is this bad?
Automatic mixed precision runs matmuls and convolutions in float16 or bfloat16 on the GPU's
tensor cores and keeps the precision-sensitive operations (reductions, softmax, losses) in
float32. It halves the memory traffic of activations and is, in the PyTorch Performance Tuning
Guide, one of the largest single speed-ups for GPU training: NVIDIA reports up to three times
faster training on arithmetic-heavy models with tensor cores (Volta and later), and the freed
memory allows larger batches.

## When not to act
Small models that are bound by data loading or Python overhead gain little: measured here on an
H200 (torch 2.11), one transformer encoder layer of width 512 on batches of 256 sequences of 16
tokens ran 1.08x faster under bfloat16 autocast, and at width 64 it ran slower (the casts cost
more than the tiny matmuls save); `torchlint verify` shows which case a script is. Some models are
numerically fragile in float16 (overflowing activations, very small gradients): prefer
bfloat16 on Ampere and later, which keeps float32's range and needs no loss scaling, and
check the loss curve against a float32 run. Code that must reproduce float32 results exactly
(numerical methods, reference checks) should stay in float32.

## Example
```python
for x, y in loader:
    x, y = x.cuda(), y.cuda()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
```

## Use instead
```python
for x, y in loader:
    x, y = x.cuda(), y.cuda()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
```
With `dtype=torch.float16` (GPUs before Ampere), scale the loss with `torch.amp.GradScaler("cuda")`:
`scaler.scale(loss).backward()`, `scaler.step(optimizer)`, `scaler.update()`.

## Fix safety
Display-only: which part of the step runs under autocast, float16 or bfloat16, and whether a
GradScaler is needed depend on the model and the GPU, and mixed precision changes the results,
so the change needs a look at the loss curve that a codemod cannot take.

## References
- [Automatic Mixed Precision package - torch.amp](https://pytorch.org/docs/stable/amp.html)
- [Automatic Mixed Precision recipe](https://pytorch.org/tutorials/recipes/recipes/amp_recipe.html)
- [PyTorch Performance Tuning Guide: use mixed precision and AMP](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html)
- [NVIDIA: Train With Mixed Precision](https://docs.nvidia.com/deeplearning/performance/mixed-precision-training/index.html)
- [Faster Deep Learning Training with PyTorch (L. Kuhn): automatic mixed precision](https://efficientdl.com/faster-deep-learning-in-pytorch-a-guide/)
"""
    valid = [
        Valid(
            """
            import torch

            model = torch.nn.Linear(2048, 2048).cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in loader:
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
            """
        ),
        Valid(
            """
            import torch

            model = torch.nn.Linear(2048, 2048).cuda().bfloat16()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in loader:
                loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
            """
        ),
        Valid(
            """
            import torch

            def main(args):
                model = torch.nn.Linear(2048, 2048).cuda()
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                for x, y in loader:
                    with torch.cuda.amp.autocast(enabled=args.use_amp):
                        loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
                    loss.backward()
                    optimizer.step()

            if __name__ == "__main__":
                main(parse_args())
            """
        ),
        Valid(
            """
            import torch

            model = torch.nn.Linear(2048, 2048)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in loader:
                torch.nn.functional.mse_loss(model(x), y).backward()
                optimizer.step()
            """
        ),
        Valid(
            """
            import torch

            class Trainer:
                def fit(self, loader):
                    for x, y in loader:
                        self.loss(self.model(x.cuda()), y.cuda()).backward()
                        self.optimizer.step()
            """
        ),
        Valid(
            """
            import torch

            model = torch.nn.Linear(2048, 2048).cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in loader:
                torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
                optimizer.step()
            """,
            target_torch_version="1.5",
        ),
    ]
    valid += [
        Valid(
            """
            import torch

            model = torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.Linear(16, 1)).cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in loader:
                torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
                optimizer.step()
            """
        ),
        Valid(
            """
            import torch
            from models import build_model

            model = build_model().cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in loader:
                torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
                optimizer.step()
            """
        ),
    ]
    valid += [
        Valid(
            """
            import torch
            import torchvision

            vgg = torchvision.models.vgg19(weights="DEFAULT").features.cuda().eval()
            image = torch.rand(1, 3, 256, 256, device="cuda", requires_grad=True)
            optimizer = torch.optim.Adam([image], lr=0.01)
            for step in range(300):
                loss = style_loss(vgg(image))
                loss.backward()
                optimizer.step()
            """
        ),
        # a latent and a dict of noise buffers, concatenated: still an input being optimised
        Valid(
            """
            import torch
            import torchvision

            vgg = torchvision.models.vgg19(weights="DEFAULT").features.cuda().eval()
            w = torch.zeros(1, 512, device="cuda", requires_grad=True)
            bufs = {"n0": torch.randn(1, 1, 64, 64, device="cuda", requires_grad=True)}
            optimizer = torch.optim.Adam([w] + list(bufs.values()), lr=0.1)
            for step in range(300):
                loss = style_loss(vgg(synthesis(w, bufs)))
                loss.backward()
                optimizer.step()
            """
        ),
    ]
    invalid = [
        Invalid(
            """
            import torch

            model = torch.nn.Linear(2048, 2048).cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in loader:
                loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
            """,
            line=7,
            column=5,
            message="in float32",
        ),
        Invalid(
            """
            import torch
            from torch import nn


            def train_epoch(model, loader, optimizer, device):
                for images, labels in loader:
                    images, labels = images.to(device), labels.to(device)
                    loss = nn.functional.cross_entropy(model(images), labels)
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()


            if __name__ == "__main__":
                device = torch.device("cuda")
                model = nn.Linear(2048, 2048).to(device)
                train_epoch(model, loader, torch.optim.SGD(model.parameters(), lr=0.1), device)
            """,
            line=10,
            column=9,
        ),
    ]

    def finish(self) -> None:
        if self.ctx.target_torch_version < _AUTOCAST_SINCE:
            return
        step = self.ctx.fact(Numerics).unsettled_step(
            frozenset({"mixed"}), lambda layers: (layers.matmul or layers.conv) and layers.big
        )
        if step is None:
            return
        fix = self.make_fix(
            'Run the forward pass and the loss under `torch.autocast("cuda", dtype=torch.bfloat16)` '
            "(float16 also needs a `torch.amp.GradScaler`)",
            Applicability.DISPLAY_ONLY,
        )
        self.report(
            step,
            "GPU training in float32 with no `torch.autocast`: half-precision tensor cores go unused",
            fix,
        )
