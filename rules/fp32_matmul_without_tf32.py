"""TL112 fp32-matmul-without-tf32."""

from __future__ import annotations

from torchlint.analysis.numerics import Numerics
from torchlint.analysis.text import may_leave_tf32_off, may_train, may_use_cuda
from torchlint.diagnostics import Applicability, FixAvailability
from torchlint.rule import Invalid, Rule, Valid

# From torch 1.7 to 1.11 TF32 was on by default for matmuls; 1.12 turned it off and added
# `set_float32_matmul_precision`.
_OFF_BY_DEFAULT_SINCE = (1, 12)
_WRITES = '`torch.set_float32_matmul_precision("high")`'


class Fp32MatmulWithoutTf32(Rule):
    code = "TL112"
    name = "fp32-matmul-without-tf32"
    summary = 'A GPU training script runs float32 matmuls without TF32 (`torch.set_float32_matmul_precision("high")`)'
    preview = True
    gpu_only = True  # TF32 tensor cores exist only on Ampere and later GPUs
    fix_availability = FixAvailability.UNSAFE
    fix_versions = {_WRITES: "1.12"}
    text_tests = (may_train, may_use_cuda, may_leave_tf32_off)
    docs = """
## What it does
Flags a CUDA training script (a training loop that runs `backward()` or an optimizer step on
every batch, in a file with an `if __name__ == "__main__":` block or module-level training, that
puts its work on a CUDA device) that never enables TF32 for its float32 matrix multiplications:
no `torch.set_float32_matmul_precision("high")` (or `"medium"`), no
`torch.backends.cuda.matmul.allow_tf32 = True`, no `fp32_precision = "tf32"`, and no training in
half precision. The model must be built in the file and do its work in matrix multiplications
(linear, recurrent or attention layers, `torch.matmul`, `@`) without convolutions: cuDNN runs
float32 convolutions in TF32 already (`torch.backends.cudnn.allow_tf32` is on by default), so
a conv net gains little. And the model must be big enough for tensor cores to matter: a
Hugging Face `from_pretrained` model, or a layer whose size is written out (or bound once to a
number) and large: 2048 x 2048 multiply-adds per sample for a linear layer, a `d_model` of 512
for attention. A model
sized only by parameters or a config, or built in another module, is not known to be big, and
the rule stays silent. It reports once per file, on the training loop's `backward()`.

A setting anywhere in the script counts, and so does one in a project module the script
imports (directly or through other project modules): TF32 enabled in a `config.py` that the
entry point imports is enabled. Not flagged, because the question may be settled elsewhere or
does not arise:

- any mention of TF32 or the matmul precision (`allow_tf32`, a `--tf32` option, even
  `set_float32_matmul_precision("highest")`, a deliberate choice);
- any sign of mixed or half precision (`autocast`, `GradScaler`, `.half()`, `bfloat16`, an
  `amp` option, apex, a trainer's `precision=16`) or a framework that picks the precision itself
  (accelerate, DeepSpeed, Lightning);
- library modules, unit tests, CPU-only scripts, files without a training loop;
- a target torch below 1.12, where TF32 was on by default for matmuls.

## Why is this bad?
Since PyTorch 1.12, float32 matmuls on CUDA run in full IEEE float32 by default. On Ampere and
later GPUs (A100, RTX 30xx, H100, ...), TF32 tensor cores run the same matmuls several times
faster: NVIDIA rates the A100 at 156 TFLOPS for TF32 against 19.5 for float32, and PyTorch's CUDA
semantics notes time a large matmul about seven times faster with TF32. Linear layers,
attention and the matmuls inside convolutions' backward all benefit. The profiler's pattern
matcher reports these kernels as an FP32 matmul pattern, and Lightning warns at start-up that
a GPU with tensor cores is not used fully until the precision is set. Measured here on an
H200 (torch 2.11): an MLP of width 4096 on batches of 1024 trained at 0.83 ms a step with TF32
against 2.35 ms in float32 (2.8x); at width 512 on batches of 256 the step is launch-bound and
nothing changed.

## When not to act
TF32 keeps float32's range but rounds the inputs of each multiplication to 10 mantissa bits
(relative error around 1e-3 instead of 1e-7). Most training is insensitive to that; code that
relies on exact float32 products (numerical linear algebra, physics simulations, checks against
reference values, tests with tight tolerances) should keep `"highest"` and say so with
`torch.set_float32_matmul_precision("highest")`. On GPUs older than Ampere the setting changes
nothing. A script that already trains under `torch.autocast` gets most of this gain anyway.

## Example
```python
import torch

model = torch.nn.Linear(1024, 1024).cuda()
optimizer = torch.optim.AdamW(model.parameters())
for x, y in loader:
    loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
```

## Use instead
```python
import torch
torch.set_float32_matmul_precision("high")

model = torch.nn.Linear(1024, 1024).cuda()
...
```

## Fix safety
Unsafe: TF32 changes the numerics of every float32 matmul and convolution in the process
(results differ from float32 at about the third significant digit), which can move losses,
break bit-for-bit comparisons with earlier runs or fail tests with tight tolerances. The fix
inserts `torch.set_float32_matmul_precision("high")` after the file's imports (with an
`import torch` when torch is imported only as `from torch import ...`); it needs torch 1.12.

## References
- [torch.set_float32_matmul_precision](https://pytorch.org/docs/stable/generated/torch.set_float32_matmul_precision.html)
- [CUDA semantics: TensorFloat-32 (TF32) on Ampere (and later) devices](https://pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices)
- [PyTorch Performance Tuning Guide](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html)
- [Faster Deep Learning Training with PyTorch (L. Kuhn)](https://efficientdl.com/faster-deep-learning-in-pytorch-a-guide/)
"""
    valid = [
        Valid(
            """
            import torch
            torch.set_float32_matmul_precision("high")

            model = torch.nn.Linear(2048, 2048).cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in loader:
                torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
                optimizer.step()
            """
        ),
        Valid(
            """
            import torch
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.backends.cudnn.allow_tf32 = True

            model = torch.nn.Linear(2048, 2048).cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in loader:
                torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
                optimizer.step()
            """
        ),
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

            def train(model, loader, optimizer):
                for x, y in loader:
                    torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
                    optimizer.step()
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
            target_torch_version="1.11",
        ),
    ]
    valid += [
        Valid(
            """
            import torch
            from torch import nn

            model = nn.Sequential(nn.Conv2d(3, 64, 3), nn.Flatten(), nn.LazyLinear(10)).cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in loader:
                nn.functional.cross_entropy(model(x.cuda()), y.cuda()).backward()
                optimizer.step()
            """
        ),
        Valid(
            """
            import torch

            model = torch.nn.Linear(2, 1).cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in loader:
                torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
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
            fixed="""
            import torch
            torch.set_float32_matmul_precision("high")

            model = torch.nn.Linear(2048, 2048).cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in loader:
                loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
            """,
            line=7,
            column=5,
            message="float32 matmuls",
        ),
        Invalid(
            """
            from torch import nn, optim


            def main():
                device = "cuda"
                model = nn.Linear(2048, 2048).to(device)
                optimizer = optim.SGD(model.parameters(), lr=0.1)
                for x, y in loader:
                    nn.functional.mse_loss(model(x.to(device)), y.to(device)).backward()
                    optimizer.step()


            if __name__ == "__main__":
                main()
            """,
            fixed="""
            from torch import nn, optim
            import torch
            torch.set_float32_matmul_precision("high")


            def main():
                device = "cuda"
                model = nn.Linear(2048, 2048).to(device)
                optimizer = optim.SGD(model.parameters(), lr=0.1)
                for x, y in loader:
                    nn.functional.mse_loss(model(x.to(device)), y.to(device)).backward()
                    optimizer.step()


            if __name__ == "__main__":
                main()
            """,
            line=9,
            column=9,
        ),
    ]

    def finish(self) -> None:
        if self.ctx.target_torch_version < _OFF_BY_DEFAULT_SINCE:
            return
        # cuDNN convolutions use TF32 already; a small model gains nothing
        step = self.ctx.fact(Numerics).unsettled_step(
            frozenset({"tf32", "mixed"}),
            lambda layers: layers.matmul and not layers.conv and layers.big,
        )
        if step is None:
            return
        alias, import_edit = self.ctx.torch_alias()
        line = f'{alias}.set_float32_matmul_precision("high")\n'
        fix = self.make_fix(
            f'Call `{alias}.set_float32_matmul_precision("high")` after the imports',
            Applicability.UNSAFE,
            self.ctx.insert_after_imports(("import torch\n" if import_edit else "") + line),
            writes=_WRITES,
        )
        self.report(
            step,
            "GPU training with float32 matmuls in full precision; TF32 tensor cores go unused",
            fix,
        )
