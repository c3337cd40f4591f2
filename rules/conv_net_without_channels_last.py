"""TL114 conv-net-without-channels-last."""

from __future__ import annotations

import re

import libcst as cst

from torchlint.analysis.model import SemanticModel
from torchlint.analysis.numerics import VISION_CONVNET, Numerics
from torchlint.analysis.symbols import dotted
from torchlint.analysis.text import may_autocast_without_channels_last, may_train, may_use_cuda
from torchlint.diagnostics import Applicability, FixAvailability
from torchlint.rule import Invalid, Rule, Valid

_CONV2D = re.compile(
    r"^torch\.nn\.(modules\.conv\.)?(Lazy)?Conv(Transpose)?2d$"
    r"|^torch\.nn\.functional\.conv(_transpose)?2d$"
)
# Autocast on the CPU (bfloat16 there) has no tensor cores for channels_last to feed.
_CPU_AUTOCAST = frozenset({"torch.cpu.amp.autocast", "torch.cpu.amp.autocast_mode.autocast"})


class ConvNetWithoutChannelsLast(Rule):
    code = "TL114"
    name = "conv-net-without-channels-last"
    summary = (
        "A conv net trained under autocast on the GPU without `memory_format=torch.channels_last`"
    )
    preview = True
    gpu_only = True  # the NHWC tensor-core convolution kernels are a GPU's
    fix_availability = FixAvailability.DISPLAY_ONLY
    tokens = ("Conv2d", "ConvTranspose2d", "conv2d", "conv_transpose2d", "torchvision")
    text_tests = (may_train, may_use_cuda, may_autocast_without_channels_last)
    docs = """
## What it does
Flags a CUDA training script (a training loop that runs `backward()` or an optimizer step on
every batch, in a file with an `if __name__ == "__main__":` block or module-level training, that
puts its work on a CUDA device) that builds a 2D convolutional network (`nn.Conv2d`, its lazy and
transposed forms, `F.conv2d`, or a torchvision CNN such as `resnet50()`), runs under
`torch.autocast` on the GPU, and never converts anything to `torch.channels_last`. It reports
once per file, on the first convolution the file builds.

Not flagged: files that mention channels-last anywhere (`memory_format=torch.channels_last`, a
`--channels-last` option, fastai's `to_channelslast()`), or whose imported project modules do;
autocast on the CPU only (`torch.autocast("cpu")`) or switched off with `enabled=False`; library
modules, unit tests, CPU-only scripts and files without a training loop. A model built in
another module of the project is not looked into: the rule needs the convolution in the
script itself.

## Why is this bad?
Tensor-core convolution kernels in cuDNN work on NHWC data. With PyTorch's default NCHW
(`contiguous_format`) tensors, each half-precision convolution under autocast transposes its
input and output around the kernel, or falls back to slower NCHW kernels. Converting the model
and the input batches to `channels_last` once lets the layout flow through the network. The
channels-last tutorial measured ResNet-50 training under AMP 22% faster on a V100 this way, and
between 8% and 35% across a set of torchvision models. Measured here on an H200 (torch 2.11): a
two-convolution net of 128 channels on batches of 256 64x64 images under bfloat16 autocast
trained at 5.6 ms a step in channels_last against 10.7 ms in NCHW (1.9x), with the same losses
and parameters within 1e-4.

## When not to act
The gain is for 2D convolutions on tensor-core GPUs (Volta and later) in half precision; in
float32 or on older GPUs it can be nothing or a slowdown. Networks dominated by depthwise or
grouped convolutions, 3D convolutions, or operators without channels-last kernels (some custom
or older ops) may run slower, and inputs with very few channels (a 3-channel image into the
first layer) gain little at that layer. Measure one epoch both ways (`torchlint verify`) before
keeping it.

## Example
```python
model = torchvision.models.resnet50().cuda()
for images, labels in loader:
    images, labels = images.cuda(), labels.cuda()
    with torch.autocast("cuda", dtype=torch.float16):
        loss = loss_fn(model(images), labels)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
```

## Use instead
```python
model = torchvision.models.resnet50().cuda().to(memory_format=torch.channels_last)
for images, labels in loader:
    images = images.cuda().to(memory_format=torch.channels_last)
    labels = labels.cuda()
    with torch.autocast("cuda", dtype=torch.float16):
        loss = loss_fn(model(images), labels)
    ...
```

## Fix safety
Display-only: the model and every 4D input batch need converting, in places only the author
knows (the model after it is built and before the optimizer is created or a checkpoint loaded,
each batch after its transfer), and the layout can make some networks slower.

## References
- [Channels Last Memory Format in PyTorch (tutorial, with its performance gains)](https://pytorch.org/tutorials/intermediate/memory_format_tutorial.html)
- [PyTorch Performance Tuning Guide: use channels_last memory format for computer vision models](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html)
- [Automatic Mixed Precision package - torch.amp](https://pytorch.org/docs/stable/amp.html)
- [Faster Deep Learning Training with PyTorch (L. Kuhn)](https://efficientdl.com/faster-deep-learning-in-pytorch-a-guide/)
"""
    valid = [
        Valid(
            """
            import torch
            from torch import nn

            model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Flatten()).cuda()
            model = model.to(memory_format=torch.channels_last)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x in loader:
                x = x.cuda().to(memory_format=torch.channels_last)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = model(x).sum()
                loss.backward()
                optimizer.step()
            """
        ),
        Valid(
            """
            import torch
            from torch import nn

            model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Flatten()).cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x in loader:
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    loss = model(x.cuda()).sum()
                loss.backward()
                optimizer.step()
            """
        ),
        Valid(
            """
            import torch
            from torch import nn

            model = nn.Sequential(nn.Linear(3, 8)).cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x in loader:
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = model(x.cuda()).sum()
                loss.backward()
                optimizer.step()
            """
        ),
        Valid(
            """
            import torch
            from torch import nn

            model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Flatten()).cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x in loader:
                loss = model(x.cuda()).sum()
                loss.backward()
                optimizer.step()
            """
        ),
        Valid(
            """
            import torch
            from torch import nn

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 8, 3)

                def forward(self, x):
                    with torch.autocast("cuda"):
                        return self.conv(x)
            """
        ),
    ]
    invalid = [
        Invalid(
            """
            import torch
            from torch import nn

            model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Flatten()).cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x in loader:
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = model(x.cuda()).sum()
                loss.backward()
                optimizer.step()
            """,
            line=4,
            column=23,
            message="channels_last",
        ),
        Invalid(
            """
            import torch
            import torchvision
            from torch.cuda.amp import GradScaler, autocast


            def main():
                model = torchvision.models.resnet18().cuda()
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                scaler = GradScaler()
                for images, labels in loader:
                    with autocast():
                        loss = torch.nn.functional.cross_entropy(model(images.cuda()), labels.cuda())
                    scaler.scale(loss).backward()
                    scaler.step(optimizer)
                    scaler.update()


            if __name__ == "__main__":
                main()
            """,
            line=7,
            column=13,
        ),
    ]

    def finish(self) -> None:
        convs: list[cst.Call] = []
        autocast = False  # some autocast that may run on the GPU
        for call in self.ctx.fact(SemanticModel).calls:
            qualname = self.ctx.symbols.qualname(call.func) or ""
            if _CONV2D.match(qualname) or VISION_CONVNET.match(qualname):
                convs.append(call)
            elif (dotted(call.func) or "").rsplit(".", 1)[-1] == "autocast":
                autocast = autocast or _on_the_gpu(call, qualname)
        if not convs or not autocast:
            return
        if self.ctx.fact(Numerics).unsettled_step(frozenset({"channels_last"})) is None:
            return
        fix = self.make_fix(
            "Convert the model and each input batch with `.to(memory_format=torch.channels_last)`",
            Applicability.DISPLAY_ONLY,
        )
        self.report(
            convs[0],
            "conv net trained under autocast in NCHW layout; `channels_last` feeds tensor cores directly",
            fix,
        )


def _on_the_gpu(call: cst.Call, qualname: str) -> bool:
    """An autocast that may run on the GPU: not the CPU's, not `enabled=False`."""
    if qualname in _CPU_AUTOCAST:
        return False
    keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword}
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    enabled = keywords.get("enabled")
    if isinstance(enabled, cst.Name) and enabled.value == "False":
        return False
    device = positional[0] if positional else keywords.get("device_type")
    return not (isinstance(device, cst.SimpleString) and device.evaluated_value == "cpu")
