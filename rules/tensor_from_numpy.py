"""TL003 tensor-from-numpy."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.dataloaders import DataLoaders
from torchlint.analysis.demos import LibraryDemo
from torchlint.analysis.loops import LoopFacts
from torchlint.analysis.model import SemanticModel
from torchlint.analysis.nodes import COMPREHENSIONS, in_loop_body
from torchlint.analysis.provenance import Evidence, NumpyProvenance
from torchlint.analysis.symbols import dotted
from torchlint.analysis.text import may_name_torch_tensor, may_use_numpy
from torchlint.analysis.weights import becomes_weight
from torchlint.analysis.writes import holder, result_holders, written_after
from torchlint.diagnostics import Applicability, FixAvailability
from torchlint.rule import Invalid, Rewrite, Rule, Valid

_MAX_CALLER_DEPTH = 3  # callers followed up the file's call graph for evidence of repetition
# Tensor methods that convert the new tensor's dtype: a second copy of the whole array.
_CONVERSIONS = frozenset(
    {"float", "double", "half", "long", "int", "short", "bool", "bfloat16", "type"}
)
_KEPT_KEYWORDS = frozenset({"dtype", "device"})
# numpy's dtype spellings -> the dtype's name; `float` and `int` are numpy's float64 and int64.
_DTYPE_NAMES = {
    "float": "float64", "double": "float64", "single": "float32", "half": "float16", "int": "int64",
    "long": "int64", "longlong": "int64", "intc": "int32", "bool": "bool", "bool_": "bool", "ubyte": "uint8",
    **{n: n for n in ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bfloat16")},
}  # fmt: skip
# torch's own spellings where they differ from numpy's: `torch.float` is float32.
_TORCH_DTYPE_NAMES = {**_DTYPE_NAMES, "float": "float32", "int": "int32", "short": "int16"}
# numpy constructors whose default dtype is float64.
_FLOAT64_BY_DEFAULT = frozenset(
    {
        "zeros",
        "ones",
        "empty",
        "full",
        "eye",
        "identity",
        "linspace",
        "genfromtxt",
        "loadtxt",
        "rand",
        "randn",
        "normal",
        "uniform",
        "random",
        "standard_normal",
    }
)
# Expressions that can carry numpy evidence; anything else (literals, lists) cannot.
_TRACEABLE = (cst.Name, cst.Attribute, cst.Subscript, cst.Call, cst.BinaryOperation, cst.IfExp)


class TensorFromNumpy(Rule):
    code = "TL003"
    name = "tensor-from-numpy"
    summary = (
        "`torch.tensor` copies a numpy array; `torch.from_numpy`/`torch.as_tensor` share its memory"
    )
    fix_availability = FixAvailability.UNSAFE
    fix_versions = {
        "`torch.from_numpy`/`torch.as_tensor`": "1.0",
    }
    tokens = ("tensor",)
    text_tests = (may_use_numpy, may_name_torch_tensor)  # `_check` reads only `torch.tensor` calls
    docs = """
## What it does
Flags `torch.tensor(x)` where `x` is evidently a numpy array from evidence in the same file: the result of a numpy function that returns an array (`np.array`, `np.zeros`, `np.load`,
`np.stack`, ...), an element unpacked from one that returns a tuple of arrays
(`_, inverse = np.unique(y, return_inverse=True)`, `np.histogram`), an image or matrix reader
(`cv2.imread`, `imageio.imread`, a key of `scipy.io.loadmat(...)`), `.numpy()`, pandas'
`.to_numpy()` or `.values`, a parameter annotated `np.ndarray`, a name or `self.` attribute
bound to one of these, indexing, slicing, `.reshape`/`.astype`/`.T` or arithmetic of such a
value, or the return value of a function or method of the file that returns one (also one
element of the tuples it returns, `image, label = load(path)`, and a method called on an object
built from a class of the file). A name bound differently in the branches of an `if` counts when
every binding is one of these. `torch.tensor` under a local alias (`to_tensor = torch.tensor`) counts. Python lists and scalars, and values of unknown
origin, are never flagged.

Only a copy that may repeat is flagged: in a loop or comprehension, in a `Dataset`'s
`__getitem__`, a collate function, a `forward`, or a module-level function that may run many
times. In a method, which is called through instances that neither the file nor the project
index follows, the code must show that the copy repeats: a loop, comprehension or lambda around
it (not one over a mapping's `.items()`, `.keys()` or `.values()`, which runs once per key: the
few fields of a processor's output), a loader's per-sample code, a `forward`, a per-batch loop that runs it (in the file or,
through the project index, in another module), or a caller in the file with such evidence;
or the new tensor is converted at once (`torch.tensor(x).float()`, `.to(torch.float)`) and kept
(stored on the object, `self.x = ...`, or handed to a class such as `TensorDataset(...)`), which
copies a whole data set twice however often it runs; a converted input that one forward of the
call consumes (`x = torch.tensor(feats).float(); return self.forward(x)`) is not kept. A copy
that evidently runs once (module-level code outside loops, an `__init__`, a `main`, a function
whose every call in the file runs once, the code outside loops of an undecorated function or
method whose every call in the project runs once or under a periodic guard (`if
self.check_frequency(step):` around image logging, no loop between the guard and the call),
other modules and calls through a base class's method included, the set-up of a training run: code outside the per-batch
loops of a function that runs them, even where folds or a hyperparameter search repeat the run,
the build of a dataset object: its constructor, the hooks PyTorch Geometric's and DGL's dataset
classes run from there, `process()` and `download()`, and the methods of the class only those
call as `self.m(...)`) is flagged only when the array is a data set read whole from a file or table (`np.load`, `np.loadtxt`, `np.genfromtxt`, `np.fromfile`, a key of
`scipy.io.loadmat(...)`, pandas' `.values`/`.to_numpy()`), where even one extra copy doubles its memory.

Not flagged:
- a copy in a method that the code does not show repeating (a calibrator's `fit`, a dataset's
  augmentation step that another module calls while building it, a collate method handed to
  a loader in another module): unknown is silent, and such copies were found to run once or
  to copy a handful of numbers;
- an array that numpy has just built from a list of Python numbers: `np.array(scores)` after
  `scores.extend(out.tolist())` or `.append(x.item())`, `np.concatenate` of `[i] * len(atoms)`
  lists, `np.array([len(s) for s in batch])`. Converting each Python object costs far more than
  the copy that follows, and such lists hold a number or a few per sample (ids, lengths, one
  score per completion): even per batch, the copy is never what a loop waits on;
- a copy beside an autoregressive decode: a `.generate(...)` call of the same function, in the
  same iteration of the innermost loop around the copy (a batch of symbol ids and speaker
  embeddings before a spectrogram decode, a processor's outputs before text generation). The
  decode runs the model once per generated token, so one copy of its inputs is noise;
- a copy in a loop of a dataset's build (`data.y = torch.tensor(labels[i])` per molecule in a
  `process()` that caches its result): the build makes one pass over the raw data, and each
  piece is copied once in it, not per step; so is a copy on a cache's miss (`if key in
  self.cache: return ...`, where the class stores `self.cache[key] = ...` and never evicts),
  which runs once per key;
- a one-off copy of an array that is not a data set: a few hundred indices built in an
  `__init__`, loss weights parsed once from the command line, a demo array;
- a copy in a library module's `if __name__ == "__main__":` demo (a module other modules of the
  project import, whose block reads no loader) or in the functions only that block calls: a
  round trip of a few images through a model is a check, not the project's training;
- a copy that becomes a module's weights: the data of `nn.Parameter(...)` or the tensor of
  `register_buffer`/`register_parameter`, directly, through views and tensor methods
  (`torch.tensor(w).transpose(0, 1).contiguous()`), or through a function of the file that
  makes its parameter one (`set_param(layer, torch.tensor(w))`). Building or loading a model's
  weights, a checkpoint conversion or constants read in a module's `__init__`, runs once per
  model however many layers it loops over, and the data set exception above does not apply:
  the array is the model, not a data set;
- an array or tensor written in place after the call in the same scope (an item or slice
  store, `+=`, an in-place method such as `add_`, `fill_`, `fill` or `sort`, `out=`,
  `np.copyto`, `np.add.at`, `np.random.shuffle`), also in a loop around the call (a buffer
  refilled each pass) or in a function or method that may run later: there the copy is what
  keeps the two apart, and sharing memory would change what the program computes;
- an array that may share memory with a tensor (`t.numpy()`, or a slice or reshape of it), where
  `torch.tensor`'s copy is what keeps the new tensor apart from `t` (use `t.clone()` there);
- an array that may have a negative stride (a slice with a negative step such as `a[::-1]`,
  `np.flip`/`np.flipud`/`np.fliplr`/`np.rot90`, or a view of one): `from_numpy` and `as_tensor`
  raise on it, as `torch.tensor` does in recent torch; what such code needs is `.copy()`, not
  another constructor;
- an array over a buffer that may be read-only (`np.frombuffer(blob)`, or a view of one):
  `from_numpy` and `as_tensor` warn on it and give a tensor that must not be written to, so
  `torch.tensor`'s copy is what makes it writable;
- a `dtype=` that converts, or whose match with the array's dtype the code does not show
  (`.astype(np.float32)`, `np.zeros(n)` is float64): a conversion copies either way;
- a `device=` other than a written CPU: the copy to the device happens either way;
- calls that pass `requires_grad=` or `pin_memory=`, which `as_tensor` does not take;
- the legacy constructors (`torch.Tensor(x)`, `torch.FloatTensor(x)`, ...): on a numpy array
  they share its memory when the dtypes match and copy only to convert, as `as_tensor` would.

## When not to act
The copy is worth removing where it is sizeable and on a hot path: per sample in a `Dataset`'s
`__getitem__` or a collate function, per step in a training or evaluation loop or a function
such a loop calls, or a whole data set copied once. The rule cannot always see how often a
module-level function runs when other modules call it (a helper of a library its users call, a
call chain through a receiver or a loop it cannot rule out, a data-preparation method reached from a
constructor in another module, such as a dataparser's outputs built when a
configuration builds the data manager) nor how large the array is: a copy that runs
once per run (offline preprocessing, a conversion script, set-up reached only from
constructors) or a per-batch copy of a few scalars (`np.array(labels)` of one label per sample)
costs nothing measurable, and leaving it is fine.

Code that a `DataLoader` runs per sample or per batch (`__getitem__`, a collate function, a
transform) runs in its worker processes when the loader has workers, off the training step's
critical path: there one extra copy of a small array (the few class ids of an image, a small
mask) costs microseconds and never shows while the workers keep ahead of the GPU. It is worth
removing where the loader has no workers (`num_workers` left at 0, as in most notebooks), where
each sample is large (an image, a volume, a window of a table), or where profiling shows the
loader is what the GPU waits on. The rule still reports these copies, because it cannot see the
array's size nor, in general, which loader runs the code with how many workers.

## Why is this bad?
`torch.tensor` always copies its input. For a numpy array on the CPU that copy is wasted work:
`torch.from_numpy(x)` wraps the array's memory without copying, and `torch.as_tensor(x, dtype=...)`
copies only when the dtype or device has to change, so it is never slower and on the CPU saves
the whole copy. In a `Dataset.__getitem__` or a per-batch loop the copy is paid for every sample.

## Example
```python
import numpy as np
import torch

features = np.load("features.npy")
x = torch.tensor(features)
y = torch.tensor(features[:, 0].astype(np.float32), dtype=torch.float32)
```

## Use instead
```python
import numpy as np
import torch

features = np.load("features.npy")
x = torch.from_numpy(features)
y = torch.as_tensor(features[:, 0].astype(np.float32), dtype=torch.float32)
```

## Fix safety
Unsafe. `torch.from_numpy(x)` and `torch.as_tensor(x)` return a tensor that shares memory with
the array whenever no conversion is needed, so in-place writes to the array after the call
show up in the tensor, and in-place writes to the tensor change the array. The rule stays
silent where the file shows such a write; writes it cannot see (through another name bound to
the same array, in a function the array or tensor is passed to, or by the caller of a function
that returns the tensor) still change behaviour.
A read-only array the file does not show (a memory-mapped `np.load`, a read-only array passed
in) gives a warning and a tensor that must not be written to. `torch.from_numpy` is chosen only when the value is certainly an
ndarray and no `dtype=` is given; otherwise the fix uses `torch.as_tensor`, keeping `dtype=`
and `device=`.
A constructor imported by name (`from torch import tensor`) is spelled through `torch`, and
the import is removed once the fixes leave it unused.

## References
- [torch.from_numpy](https://pytorch.org/docs/stable/generated/torch.from_numpy.html)
- [torch.as_tensor](https://pytorch.org/docs/stable/generated/torch.as_tensor.html)
- [torch.tensor: "always copies data"](https://pytorch.org/docs/stable/generated/torch.tensor.html)
- [torch.Tensor: legacy constructors](https://pytorch.org/docs/stable/tensors.html)
- [Faster Deep Learning Training with PyTorch (L. Kuhn): create tensors without copies](https://efficientdl.com/faster-deep-learning-in-pytorch-a-guide/)
"""
    valid = [
        # built from Python numbers (one id per atom, the lengths of a batch): the copy is noise
        Valid(
            """
            import numpy as np
            import torch

            def collate(graphs):
                owners = []
                for i, graph in enumerate(graphs):
                    owners.append([i] * len(graph.atoms))
                lengths = np.array([len(g.atoms) for g in graphs])
                return torch.tensor(np.concatenate(owners)), torch.tensor(lengths)
            """
        ),
        # a method whose callers the code does not show repeating: unknown is silent
        Valid(
            """
            import numpy as np
            import torch

            class Calibrator:
                def fit(self, errors):
                    self.scale = torch.tensor(np.std(np.stack(errors), axis=0))
                    return self
            """
        ),
        Valid(
            """
            import torch
            x = torch.tensor([1.0, 2.0, 3.0])
            y = torch.tensor(3.5)
            """
        ),
        Valid(
            """
            import torch
            import numpy as np
            scale = torch.tensor(np.log(10.0))
            """
        ),
        Valid(
            """
            import torch
            import numpy as np
            x = torch.tensor(np.zeros(3), device='cuda')
            """
        ),
        # bound to an array on one path only: in an `if` without `else`, or a parameter otherwise
        Valid(
            """
            import torch
            import numpy as np

            def f(a, b, x):
                if a:
                    x = np.load('a.npy')
                elif b:
                    return torch.tensor(x)
                return torch.tensor(x)
            """
        ),
        Valid(
            """
            import torch
            import numpy as np
            x = torch.tensor(np.zeros(3), device=torch.device('cuda', 0))
            """
        ),
        # a negative stride: `from_numpy`/`as_tensor` raise on it; it needs `.copy()`
        Valid(
            """
            import numpy as np
            import torch

            def flip(loader):
                for x in loader:
                    a = np.asarray(x)[:, ::-1]
                    yield torch.tensor(a), torch.tensor(np.flip(np.array(x), 0).T)
            """
        ),
        Valid(
            """
            import torch

            def to_numpy(t):
                return t.cpu().numpy()

            def f(t):
                x = to_numpy(t)
                return torch.tensor(x[:, ::2].T)
            """
        ),
        Valid(
            """
            import torch
            import numpy as np
            x = torch.tensor(np.zeros(3), requires_grad=True)
            """
        ),
        Valid(
            """
            import torch
            import numpy as np
            x = np.zeros(3)
            for x in batches:
                t = torch.tensor(x)
            """
        ),
        Valid(
            """
            import torch
            import numpy as np
            if flag:
                x = np.zeros(3)
            t = torch.tensor(x)
            """
        ),
        Valid(
            """
            import torch
            import numpy as np
            def f(x):
                return torch.tensor(x)
            """
        ),
        Valid(
            """
            import torch
            import numpy as np
            import pandas as pd
            t = torch.tensor(torch.max(a, dim=1).values)
            """
        ),
        Valid(
            """
            import torch
            import numpy as np
            t = torch.tensor(np.zeros(3) * weight)
            """
        ),
        Valid(
            """
            import numpy as np
            tensor = lambda x: x
            t = tensor(np.zeros(3))
            """
        ),
        Valid(
            """
            import numpy as np
            x = np.zeros(3)
            t = tensor(x)
            """
        ),
        Valid(
            """
            import torch

            class Scale:
                def double(self):
                    self.a = self.a * 2
                    return torch.tensor(self.a)
            """
        ),
        Valid(
            """
            import torch
            import numpy as np
            if isinstance(x, np.ndarray):
                pass
            else:
                t = torch.tensor(x)
            """
        ),
        Valid(
            """
            import torch
            import numpy as np
            x = np.zeros(3)
            for i in range(3):
                t = torch.tensor(x)
                x = t.tolist()
            """
        ),
        # the copy becomes a module's weights: a conversion loop over layers, a loaded constant
        Valid(
            """
            import numpy as np
            import torch
            from torch import nn

            def set_param(layer, weight):
                layer.weight = nn.Parameter(weight)

            class Codebook(nn.Module):
                def __init__(self, path):
                    super().__init__()
                    self.register_buffer("used", torch.tensor(np.load(path)))

            def convert(weights, model):
                for layer, w in zip(model.layers, weights):
                    set_param(layer, torch.tensor(np.asarray(w)).transpose(0, 1))
            """
        ),
        # the build of a dataset: PyG runs process() once, from the constructor, and caches it
        Valid(
            """
            import numpy as np
            import torch
            from torch_geometric.data import InMemoryDataset

            class Molecules(InMemoryDataset):
                def process(self):
                    labels = np.asarray(self.raw_labels)
                    graphs = []
                    for i, smiles in enumerate(self.smiles):
                        graph = to_graph(smiles)
                        graph.y = torch.tensor(labels[i])
                        graphs.append(graph)
                    torch.save(self.collate(graphs), self.processed_paths[0])
            """
        ),
        # a conversion copies whichever function builds the tensor: float64 into float32
        Valid(
            """
            import numpy as np
            from torch import FloatTensor
            grid = np.ones((4, 4))
            x = FloatTensor(np.sin(grid[:, 0::2]))
            """
        ),
        Valid(
            """
            import torch
            import numpy as np
            memory = np.zeros((64, 9))
            x = torch.tensor(memory[:, :4], dtype=torch.float32)
            """
        ),
        # a dtype the code does not show: as_tensor may have to convert (and copy) as well
        Valid(
            """
            import torch
            import pandas as pd
            df = pd.read_csv('train.csv')
            y = torch.tensor(df['label'].values, dtype=torch.float32)
            """
        ),
        # legacy constructors share the array's memory when the dtypes match, as as_tensor would
        Valid(
            """
            import numpy as np
            from torch import FloatTensor
            grid = np.ones((4, 4), dtype=np.float32)
            x = FloatTensor(grid[:, 0::2])
            """
        ),
        Valid(
            """
            import numpy
            import torch as T
            memory = numpy.zeros((64, 9))
            x = T.LongTensor(memory[:, 4:5].astype(int))
            """
        ),
        # built on a device: the copy from the host happens either way
        Valid(
            """
            import torch
            import numpy as np

            def predict(data, device):
                if isinstance(data, np.ndarray):
                    return torch.tensor(data, device=device)
            """
        ),
        # the array is written after the copy: a shared tensor would see the write
        Valid(
            """
            import numpy as np
            import torch

            counts = np.zeros(3)
            snapshot = torch.tensor(counts)
            np.add(counts, 1, out=counts)
            """
        ),
        # a buffer refilled on every pass: each copy keeps that pass's contents
        Valid(
            """
            import numpy as np
            import torch

            buffer = np.zeros(4, dtype=np.float32)
            batches = []
            for step in range(3):
                buffer[:] = step
                batches.append(torch.tensor(buffer))
            """
        ),
        # the tensor is written in place: a shared array would change with it
        Valid(
            """
            import numpy as np
            import torch

            weights = np.load("weights.npy")
            w = torch.tensor(weights).float()
            w.mul_(0.5)
            """
        ),
    ]
    valid += [
        # copies that run once, of arrays that are not data sets read from a file
        Valid(
            """
            import numpy as np
            import torch
            from torch import nn

            class Shuffle(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    idx = np.random.RandomState(1).permutation(n)
                    self.register_buffer("idx", torch.tensor(idx))
            """
        ),
        Valid(
            """
            import numpy as np
            import torch

            def loss_weights(spec):
                return torch.tensor(np.fromstring(spec, dtype=float, sep="-"))

            def main(args):
                weights = loss_weights(args.loss_weights)
                table = torch.tensor(np.arange(10))

            if __name__ == "__main__":
                main(parse_args())
            """
        ),
    ]
    invalid = [
        # a write before the call: nothing writes into the array once the tensor shares it
        Invalid(
            """
            import numpy as np
            import torch

            features = np.load("features.npy")
            features[features < 0] = 0
            x = torch.tensor(features)
            """,
            fixed="""
            import numpy as np
            import torch

            features = np.load("features.npy")
            features[features < 0] = 0
            x = torch.from_numpy(features)
            """,
            line=6,
            column=5,
            message="copies numpy array `features` (line 4)",
        ),
        # an element of the tuples a function of the file returns; a method of an instance of a class
        # of the file; a name bound in both branches of an `if`
        Invalid(
            """
            import numpy as np
            import torch

            class Volume:
                def __init__(self, path):
                    self.voxels = np.load(path)

                def crop(self, i):
                    return self.voxels[i : i + 8], i

            def load(path, i):
                return np.load(path)[i : i + 8], i

            def sample(path, i, cached):
                if cached:
                    chunk, i = load(path, i)
                else:
                    chunk, i = Volume(path).crop(i)
                return torch.tensor(chunk)
            """,
            fixed="""
            import numpy as np
            import torch

            class Volume:
                def __init__(self, path):
                    self.voxels = np.load(path)

                def crop(self, i):
                    return self.voxels[i : i + 8], i

            def load(path, i):
                return np.load(path)[i : i + 8], i

            def sample(path, i, cached):
                if cached:
                    chunk, i = load(path, i)
                else:
                    chunk, i = Volume(path).crop(i)
                return torch.from_numpy(chunk)
            """,
            line=19,
            column=12,
            message="`torch.tensor` copies numpy array `chunk` (line 12); `from_numpy` would share it",
        ),
        # a tuple element of a numpy result, an OpenCV image, torch.tensor under a local alias
        Invalid(
            """
            import numpy as np
            import torch

            def encode(labels):
                _, inverse = np.unique(labels, return_inverse=True)
                return torch.tensor(inverse)
            """,
            fixed="""
            import numpy as np
            import torch

            def encode(labels):
                _, inverse = np.unique(labels, return_inverse=True)
                return torch.from_numpy(inverse)
            """,
            line=6,
            column=12,
            message="`torch.tensor` copies numpy array `inverse` (line 5); `from_numpy` would share it",
        ),
        Invalid(
            """
            import cv2
            import torch
            for path in paths:
                image = cv2.imread(path)
                x = torch.tensor(image)
            """,
            fixed="""
            import cv2
            import torch
            for path in paths:
                image = cv2.imread(path)
                x = torch.from_numpy(image)
            """,
            line=5,
            column=9,
            message="`torch.tensor` copies numpy array `image` (line 4); `from_numpy` would share it",
        ),
        Invalid(
            """
            import numpy as np
            import torch
            to_tensor = torch.tensor
            xs = [to_tensor(np.zeros(3)) for _ in range(n)]
            """,
            fixed="""
            import numpy as np
            import torch
            to_tensor = torch.tensor
            xs = [torch.from_numpy(np.zeros(3)) for _ in range(n)]
            """,
            line=4,
            column=7,
            message="`torch.tensor` copies numpy array `np.zeros(3)`; `from_numpy` would share it",
        ),
        Invalid(
            """
            import numpy as np
            import torch
            features = np.load('features.npy')
            x = torch.tensor(features)
            """,
            fixed="""
            import numpy as np
            import torch
            features = np.load('features.npy')
            x = torch.from_numpy(features)
            """,
            line=4,
            column=5,
            message="`torch.tensor` copies numpy array `features` (line 3); `from_numpy` would share it",
        ),
        # the dtypes match, so as_tensor shares the array instead of copying it
        Invalid(
            """
            import numpy as np
            import torch

            def collate(rows):
                return torch.tensor(np.stack(rows).astype(np.float32), dtype=torch.float)
            """,
            fixed="""
            import numpy as np
            import torch

            def collate(rows):
                return torch.as_tensor(np.stack(rows).astype(np.float32), dtype=torch.float)
            """,
            line=5,
            column=12,
            message="`torch.tensor` copies numpy array argument; `as_tensor` would share it",
        ),
        Invalid(
            """
            import numpy
            import torch as T
            memory = numpy.zeros((64, 9))
            while learning:
                x = T.tensor(memory[:, 4:5].astype(int), dtype=T.long)
            """,
            fixed="""
            import numpy
            import torch as T
            memory = numpy.zeros((64, 9))
            while learning:
                x = T.as_tensor(memory[:, 4:5].astype(int), dtype=T.long)
            """,
            line=5,
            column=9,
            message="`torch.tensor` copies numpy array `memory[:, 4:5].astype(int)` (line 3); `as_tensor` would share it",
        ),
        Invalid(
            """
            import torch
            import numpy as np

            class Data(torch.utils.data.Dataset):
                def __init__(self, path):
                    self.images = np.load(path)

                def __getitem__(self, i):
                    return torch.tensor(self.images[i])
            """,
            fixed="""
            import torch
            import numpy as np

            class Data(torch.utils.data.Dataset):
                def __init__(self, path):
                    self.images = np.load(path)

                def __getitem__(self, i):
                    return torch.as_tensor(self.images[i])
            """,
            line=9,
            column=16,
            message="`torch.tensor` copies numpy array `self.images[i]` (line 6); `as_tensor` would share it",
        ),
        Invalid(
            """
            import torch

            def to_numpy(t):
                return t.detach().cpu().numpy()

            def double(t):
                return torch.tensor(to_numpy(t) * 2, device='cpu')
            """,
            fixed="""
            import torch

            def to_numpy(t):
                return t.detach().cpu().numpy()

            def double(t):
                return torch.as_tensor(to_numpy(t) * 2, device='cpu')
            """,
            line=7,
            column=12,
            message="`torch.tensor` copies numpy array `to_numpy(t) * 2` (line 4); `as_tensor` would share it",
        ),
        Invalid(
            """
            import torch
            import numpy as np

            def predict(data):
                if isinstance(data, np.ndarray):
                    return torch.tensor(data)
                return data
            """,
            fixed="""
            import torch
            import numpy as np

            def predict(data):
                if isinstance(data, np.ndarray):
                    return torch.from_numpy(data)
                return data
            """,
            line=6,
            column=16,
            message="`torch.tensor` copies numpy array `data` (line 5); `from_numpy` would share it",
        ),
        Invalid(
            """
            import numpy as np
            import pandas as pd
            import torch

            class Table(torch.utils.data.Dataset):
                def __init__(self, df, classify):
                    self.y = df['y'].values
                    if classify:
                        self.y = self.y.astype(np.int64)

                def __getitem__(self, i):
                    return torch.tensor(self.y[i])
            """,
            fixed="""
            import numpy as np
            import pandas as pd
            import torch

            class Table(torch.utils.data.Dataset):
                def __init__(self, df, classify):
                    self.y = df['y'].values
                    if classify:
                        self.y = self.y.astype(np.int64)

                def __getitem__(self, i):
                    return torch.as_tensor(self.y[i])
            """,
            line=12,
            column=16,
            message="`torch.tensor` copies numpy array `self.y[i]` (line 7); `as_tensor` would share it",
        ),
    ]

    def __init__(self, ctx, options) -> None:
        super().__init__(ctx, options)
        self.calls: list[cst.Call] = []
        self.rewrites: list[Rewrite] = []

    def visit_Call(self, node: cst.Call) -> None:
        if node.args and type(node.func) in (cst.Name, cst.Attribute):
            self.calls.append(node)

    def finish(self) -> None:
        for call in self.calls:
            self._check(call)
        self.report_rewrites(self.rewrites)

    def _check(self, call: cst.Call) -> None:
        func = call.func
        alias = self.ctx.fact(SemanticModel).alias_of(func) if type(func) is cst.Name else None
        if self.ctx.symbols.qualname(func) == "torch.tensor" or (
            alias is not None and self.ctx.symbols.qualname(alias) == "torch.tensor"
        ):
            self._check_tensor(call)

    def _check_tensor(self, call: cst.Call) -> None:
        data, keywords = call.args[0], call.args[1:]
        if data.keyword is not None or data.star or not all(self._kept(a) for a in keywords):
            return
        device = next(
            (a.value for a in keywords if a.keyword and a.keyword.value == "device"), None
        )
        if device is not None and not self._is_cpu(device):
            return  # built on a device: the copy from the host happens either way
        evidence = self._evidence(data.value)
        if evidence is None or self.ctx.fact(NumpyProvenance).may_view_tensor(data.value):
            return  # copying an array that views a tensor keeps the new tensor apart from it
        if self.ctx.fact(NumpyProvenance).may_not_share(data.value):
            return  # `a[::-1]`, `np.frombuffer(blob)`: `from_numpy` raises or warns; the copy is needed
        if self.ctx.fact(NumpyProvenance).from_python_numbers(evidence):
            return  # ids, lengths, scores: building the array from Python objects dwarfs the copy
        if self._one_off(call, evidence):
            return  # a one-off copy of a small array: set-up code, not a per-batch copy
        if self._beside_decode(call):
            return  # next to an autoregressive decode, which runs the model once per token
        if self.ctx.fact(LibraryDemo).runs_only_in_demo(call):
            return  # a library module's `__main__` demo: not the project's training or evaluation
        if becomes_weight(self.ctx, call):
            return  # a module's weights: built or loaded once per model, not per batch
        if self._written_later(call, data.value):
            return  # the copy keeps a later in-place write from showing in the other one
        dtype = next((a.value for a in keywords if a.keyword and a.keyword.value == "dtype"), None)
        if dtype is not None and (
            self._dtype_name(dtype) is None
            or self._dtype_name(dtype) != self._array_dtype(data.value, evidence)
        ):
            return  # a conversion copies whichever function makes the tensor
        torch, import_edit = self.ctx.torch_alias(call)
        exact = evidence.exact and not keywords
        func = "from_numpy" if exact else "as_tensor"
        new = call.with_changes(func=cst.parse_expression(f"{torch}.{func}"))
        fix = self.make_fix(
            f"Use `torch.{func}`, which shares the array's memory",
            Applicability.UNSAFE,
            import_edit,
            self.ctx.replace(call, new),
            writes="`torch.from_numpy`/`torch.as_tensor`",
        )
        message = f"`torch.tensor` copies numpy array {self._origin(data.value, evidence)}; `{func}` would share it"
        self.rewrites.append(Rewrite(call, message, fix, _head(call)))

    # -- helpers -----------------------------------------------------------------------
    def _one_off(self, call: cst.Call, evidence: Evidence) -> bool:
        """Set-up that runs once (a data set read whole and copied whole excepted: that copy
        doubles its memory), or a piece of the one pass a dataset's build makes over its data
        (`data.y = torch.tensor(labels[i])` per molecule in a PyG `process()`)."""
        data_set = self.ctx.fact(NumpyProvenance).reads_data_set(evidence)
        if self.ctx.fact(LoopFacts).once_per_key(call):
            return True  # a cache's miss builds each entry once: a piece of one pass
        if self.ctx.fact(LoopFacts).runs_once(call):
            return not data_set
        build = self.ctx.fact(DataLoaders).build_pass(call)
        if build is not None:
            return build == "piece" or not data_set
        if data_set or self._once_in_project(call):
            return not data_set
        return self._in_method(call) and not self._repeats(call) and not self._converted(call)

    def _beside_decode(self, call: cst.Call) -> bool:
        """Whether the copy runs beside an autoregressive decode: a `.generate(...)` call of the
        same function, in the same iteration of the innermost loop around the copy (a loop over
        a mapping's keys aside). The decode runs the model once per generated token, so a copy
        of its inputs once per decode is noise (judged: a batch of symbol ids and speaker
        embeddings before a 2000-step spectrogram decode, processor outputs before generation)."""
        model = self.ctx.fact(SemanticModel)
        function = model.function_of(call)
        if function is None:
            return False
        scope: cst.CSTNode = function
        child: cst.CSTNode = call
        for parent in self.ctx.ancestors(call):
            if parent is function:
                break
            if _repeating_loop(parent, child):
                scope = parent
                break
            child = parent
        for attribute in model.attributes.get("generate", ()):
            site = self.ctx.parents.get(attribute)
            if (
                isinstance(site, cst.Call)
                and site.func is attribute
                and model.is_ancestor(scope, site)
                and model.function_of(site) is function
            ):
                return True
        return False

    def _in_method(self, call: cst.Call) -> bool:
        """Whether the code holding `call` is a method's own: called through instances, which
        neither the file nor the project index follows to the loops that may run it."""
        function = self.ctx.fact(SemanticModel).function_of(call)
        block = self.ctx.parents.get(function) if function is not None else None
        return block is not None and isinstance(self.ctx.parents.get(block), cst.ClassDef)

    def _converted(self, call: cst.Call) -> bool:
        """Whether the new tensor is converted at once (`torch.tensor(x).float()`,
        `.to(torch.float)`) and kept as a data set: the whole array is copied twice, which
        judges count even once per run (a data set standardised in a `setup()` method). A
        converted input that one call's forward consumes is not kept (a feature matrix built
        per search generation): its copy is judged unmeasurable."""
        attribute = self.ctx.parents.get(call)
        if not isinstance(attribute, cst.Attribute) or attribute.value is not call:
            return False
        method = self.ctx.parents.get(attribute)
        if not isinstance(method, cst.Call) or method.func is not attribute:
            return False
        name = attribute.attr.value
        if name == "to":
            converted = any(self._dtype_name(a.value) is not None for a in method.args)
        else:
            converted = name in _CONVERSIONS
        return converted and self._held(method)

    def _held(self, value: cst.Call) -> bool:
        """Whether the tensor (through chained tensor methods, `.to(device)`) is stored on the
        object (`self.x = ...`) or handed to a class (`TensorDataset(...)`): a data set held."""
        node: cst.CSTNode = value
        while True:
            parent = self.ctx.parents.get(node)
            outer = self.ctx.parents.get(parent) if parent is not None else None
            if not (isinstance(parent, cst.Attribute) and isinstance(outer, cst.Call)):
                break
            node = outer  # `.to(device)`, `.unsqueeze(0)`
        parent = self.ctx.parents.get(node)
        if isinstance(parent, cst.Assign):
            return all(
                isinstance(t.target, cst.Attribute) and dotted(t.target.value) == "self"
                for t in parent.targets
            )
        if isinstance(parent, cst.Arg):
            site = self.ctx.parents.get(parent)
            callee = (dotted(site.func) or "") if isinstance(site, cst.Call) else ""
            return callee.rsplit(".", 1)[-1][:1].isupper()
        return False

    def _repeats(self, call: cst.Call) -> bool:
        """Evidence that a method's copy runs many times: a loop, comprehension or lambda around
        it, a loader's per-sample code (`__getitem__`, a collate function and what they call, a
        PyTorch Geometric dataset's `get`), a
        module's `forward`, or a function that a per-batch loop runs, in this file or, through
        the project index, in another; or a caller in the file with such evidence. Without it
        the copy is taken to run once: unknown is silent (a calibrator's `fit`, a dataset's
        augmentation step that another module's build calls)."""
        return self._repeats_at(call, 0)

    def _repeats_at(self, node: cst.CSTNode, depth: int) -> bool:
        child = node
        function = None
        for parent in self.ctx.ancestors(node):
            if isinstance(parent, cst.Lambda) or _repeating_loop(parent, child):
                return True
            if isinstance(parent, cst.FunctionDef):
                function = parent
                break
            child = parent
        if function is None:
            return False  # module-level code outside loops runs once
        loaders = self.ctx.fact(DataLoaders)
        if loaders.sample_function(node) is not None or loaders.serves_samples(function):
            return True
        if function.name.value == "forward" or (
            self.ctx.fact(LoopFacts).per_batch_loop(node, every_iteration=False) is not None
        ):
            return True
        if depth >= _MAX_CALLER_DEPTH:
            return False
        return any(self._repeats_at(site, depth + 1) for site in self._sites(function))

    def _sites(self, function: cst.FunctionDef) -> list[cst.Call]:
        """The file's calls of `function`: those the call graph resolves, and for a method every
        `self.m(...)`, `cls.m(...)` or `Owner.m(...)` of its name (a subclass's `__getitem__`
        calling an inherited helper, a classmethod called in a loop): where evidence of
        repetition is sought, a same-named method of another class only keeps the old answer."""
        model = self.ctx.fact(SemanticModel)
        sites = list(model.callers.get(function, ()))
        block = self.ctx.parents.get(function)
        owner = self.ctx.parents.get(block) if block is not None else None
        if not isinstance(owner, cst.ClassDef):
            return sites
        receivers = {"self", "cls", owner.name.value}
        for attribute in model.attributes.get(function.name.value, ()):
            call = self.ctx.parents.get(attribute)
            if (
                isinstance(call, cst.Call)
                and call.func is attribute
                and isinstance(attribute.value, cst.Name)
                and attribute.value.value in receivers
                and call not in sites
            ):
                sites.append(call)
        return sites

    def _once_in_project(self, call: cst.Call) -> bool:
        """The straight-line code of a module-level function or a method that the project calls
        only from code that runs once or now and then (`ProjectIndex.runs_rarely`: a dataset's
        augmentation step reached from its base class's `build()` in another module, a
        calibrator's `fit` at the end of a prediction run, caption images drawn for the image
        logging a per-step hook runs under a periodic guard). Not per-sample code a loader
        runs, nor a decorated function, which a framework may run anywhere."""
        function = self.ctx.fact(SemanticModel).function_of(call)
        project = self.ctx.project
        if function is None or function.decorators or project is None:
            return False
        if self.ctx.fact(DataLoaders).sample_function(call) is not None:
            return False
        for parent in self.ctx.ancestors(call):
            if parent is function:
                break
            if isinstance(parent, (cst.For, cst.While, cst.Lambda, *COMPREHENSIONS)):
                return False
        block = self.ctx.parents.get(function)
        owner = self.ctx.parents.get(block) if block is not None else None
        if isinstance(owner, cst.ClassDef):
            key = f"{owner.name.value}.{function.name.value}"
        elif isinstance(block, cst.Module):
            key = function.name.value
        else:
            return False  # a nested function: the index knows module-level names only
        return project.runs_rarely(self.ctx.absolute_path, key)

    def _written_later(self, call: cst.Call, data: cst.BaseExpression) -> bool:
        """Whether the array (or a variable it views) or the new tensor is written in place after
        the call, where sharing memory would change what the program computes."""
        model = self.ctx.fact(SemanticModel)
        held = [holder(model, data), *result_holders(model, call)]
        return any(h is not None and written_after(model, h, call) is not None for h in held)

    def _evidence(self, value: cst.BaseExpression) -> Evidence | None:
        if not isinstance(value, _TRACEABLE):
            return None  # literals, comprehensions: no need to index the file
        return self.ctx.fact(NumpyProvenance).evidence(value)

    def _origin(self, value: cst.BaseExpression, evidence: Evidence) -> str:
        """`x` (from line N) or the inline expression, to show the user why it is numpy."""
        text = self.ctx.code(value).strip()
        shown = f"`{text}`" if len(text) <= 32 else "argument"
        if evidence.origin is value or self._contains(value, evidence.origin):
            return shown
        return f"{shown} (line {self.ctx.start(evidence.origin).row})"

    def _contains(self, outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
        return any(a is outer for a in self.ctx.ancestors(inner))

    @staticmethod
    def _kept(arg: cst.Arg) -> bool:
        return arg.keyword is not None and arg.keyword.value in _KEPT_KEYWORDS

    def _is_cpu(self, device: cst.BaseExpression) -> bool:
        """A device written as the CPU (`"cpu"`, `torch.device("cpu")`)."""
        if isinstance(device, cst.SimpleString):
            return str(device.evaluated_value).startswith("cpu")
        if (
            isinstance(device, cst.Call)
            and self.ctx.symbols.qualname(device.func) == "torch.device"
            and device.args
        ):
            return self._is_cpu(device.args[0].value)
        return False

    def _array_dtype(self, value: cst.BaseExpression, evidence: Evidence) -> str | None:
        """The array's dtype where the code shows it: `.astype(np.float32)`, `np.zeros(n)` (float64),
        `np.array(x, dtype=...)`, read through indexing and the name's assignment; else None."""
        for expr in (value, evidence.origin):
            while isinstance(expr, cst.Subscript):
                expr = expr.value
            if isinstance(expr, cst.Call):
                return self._made_dtype(expr)
        return None

    def _dtype_name(self, expr: cst.BaseExpression) -> str | None:
        """`np.float32`, `torch.float`, `"float32"`, `float` -> the dtype's name; None otherwise."""
        if isinstance(expr, cst.SimpleString):
            return _DTYPE_NAMES.get(str(expr.evaluated_value))
        qualname = self.ctx.symbols.qualname(expr) or dotted(expr) or ""
        names = _TORCH_DTYPE_NAMES if qualname.startswith("torch.") else _DTYPE_NAMES
        return names.get(qualname.rsplit(".", 1)[-1])

    def _made_dtype(self, call: cst.Call) -> str | None:
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "astype" and call.args:
            return self._dtype_name(call.args[0].value)
        qualname = self.ctx.symbols.qualname(call.func) or ""
        if not qualname.startswith("numpy."):
            return None
        name = qualname.rsplit(".", 1)[-1]
        given = next((a.value for a in call.args if a.keyword and a.keyword.value == "dtype"), None)
        if given is not None:
            return self._dtype_name(given)
        if name in _DTYPE_NAMES:  # np.float32(x)
            return _DTYPE_NAMES[name]
        if name == "arange":  # numpy infers its dtype from the arguments: integers give int64
            return "float64" if any(isinstance(a.value, cst.Float) for a in call.args) else "int64"
        return "float64" if name in _FLOAT64_BY_DEFAULT else None


def _repeating_loop(parent: cst.CSTNode, child: cst.CSTNode) -> bool:
    """A loop whose body holds `child`, or a comprehension, that runs more than once per key."""
    if isinstance(parent, cst.For | cst.While):
        return in_loop_body(parent, child) and not _over_keys(parent)
    return isinstance(parent, COMPREHENSIONS) and not _over_keys(parent)


def _over_keys(loop: cst.CSTNode) -> bool:
    """A loop or comprehension over a mapping's `.items()`, `.keys()` or `.values()`: it runs once
    per key (the few fields of a batch or of a processor's output), not once per sample."""
    if isinstance(loop, cst.For):
        iterable: cst.BaseExpression | None = loop.iter
    elif isinstance(loop, COMPREHENSIONS) and loop.for_in.inner_for_in is None:
        iterable = loop.for_in.iter
    else:
        return False
    return (
        isinstance(iterable, cst.Call)
        and not iterable.args
        and isinstance(iterable.func, cst.Attribute)
        and iterable.func.attr.value in ("items", "keys", "values")
    )


def _head(call: cst.Call) -> str | None:
    """The imported name the call is written through: `tensor` in `tensor(x)`, `torch` in `torch.tensor(x)`."""
    return (dotted(call.func) or "").split(".")[0] or None
