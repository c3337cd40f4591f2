"""TL101 leaves `pin_memory` alone where a pinned copy has nothing to gain: issue 24, fix round 7
(the one-off passes of the judged production sample: feature extraction and precompute scripts,
an encoder over an in-memory `TensorDataset`).

- An export pass: every batch's results are written to files as the loop goes (`torch.save` of
  extracted features, `np.save` of a synthesized spectrogram per sample), with no backward or
  optimizer step, run once. The per-batch read back and disk write pace the loop; the loader
  already has workers, so only `pin_memory` was in question, and it saves nothing measurable.
  An evaluation that writes only under a flag (`if args.save_result:`) may write nothing: it
  is still asked.
- A `non_blocking=True` copy from an in-memory dataset (no workers) counts as overlapping only
  where the host does not wait for the device right after it: not where the function that
  copies hands back `out.cpu()`, nor where the loop reads a device value on the host every
  iteration (`loss.item()`). After such a wait the device is idle at the next copy, and a
  pinned non_blocking copy is as synchronous as a pageable one.

Each case is an invented project, checked once by the installed `torchlint`; a line ending in
`# TL101: text` expects a finding there, every other TL101 finding is a failure.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

RULES = ("TL101",)

CASES = [
    Case(
        "export-pass-writing-each-batch",
        rules=RULES,
        files={
            "preprocess.py": """\
import torch
from torch.utils.data import DataLoader


def main(dataset, encoder, out_dir, n_workers):
    device = torch.device("cuda")
    loader = DataLoader(dataset, batch_size=1, num_workers=n_workers)
    for name, wav in loader:
        wav = wav.to(device)
        with torch.no_grad():
            feat = encoder(wav).cpu()
        torch.save(feat, f"{out_dir}/{name[0]}.pt")


if __name__ == "__main__":
    main(*setup())
""",
        },
    ),
    Case(
        "export-pass-writing-each-sample",
        rules=RULES,
        files={
            "synthesize.py": """\
import numpy as np
import torch
from torch.utils.data import DataLoader


def run(model, dataset, out_dir, device):
    loader = DataLoader(dataset, batch_size=16, num_workers=2)
    for texts, mels, names in loader:
        texts, mels = texts.to(device), mels.to(device)
        outputs = model(texts, mels)
        for output, name in zip(outputs, names):
            np.save(f"{out_dir}/{name}.npy", output.detach().cpu().numpy())


if __name__ == "__main__":
    run(*setup())
""",
        },
    ),
    # an evaluation that writes its outputs only when asked: pinning is still asked for
    Case(
        "evaluation-writing-under-a-flag",
        rules=RULES,
        files={
            "test.py": """\
import cv2
import torch
from torch.utils.data import DataLoader


def main(args, model, test_set):
    loader = DataLoader(test_set, batch_size=1, num_workers=args.num_workers)  # TL101: DataLoader(
    scores = []
    for clip, target, name in loader:
        output = model(clip.to("cuda"))
        image = output.cpu().numpy()
        if args.save_result:
            cv2.imwrite(f"results/{name[0]}.png", image)
        scores.append(psnr(image, target.numpy()))
    print(sum(scores) / len(scores))


if __name__ == "__main__":
    main(*setup())
""",
        },
    ),
    # an encoder over in-memory tensors whose copying helper hands back a host copy
    Case(
        "non-blocking-copy-read-back-by-its-helper",
        rules=RULES,
        files={
            "encoder.py": """\
import torch
from torch.utils.data import DataLoader, TensorDataset


class Encoder:
    def _encode_batch(self, x):
        out = self.net(x.to(self.device, non_blocking=True))
        return out.cpu()

    def encode(self, data, batch_size):
        loader = DataLoader(TensorDataset(torch.from_numpy(data)), batch_size=batch_size)
        with torch.no_grad():
            outputs = []
            for batch in loader:
                outputs.append(self._encode_batch(batch[0]))
        return torch.cat(outputs).numpy()
""",
        },
    ),
    Case(
        "non-blocking-copy-in-a-loop-that-reads-every-step",
        rules=RULES,
        files={
            "fit.py": """\
import torch
from torch.utils.data import DataLoader, TensorDataset


def fit(model, optimizer, xs, ys, device):
    loader = DataLoader(TensorDataset(xs, ys), batch_size=256, shuffle=True)
    total = 0.0
    for x, y in loader:
        loss = model(x.to(device, non_blocking=True), y.to(device, non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total
""",
        },
    ),
    # nothing waits for the device in the loop: the pinned copy overlaps the step before it
    Case(
        "non-blocking-copy-free-to-overlap",
        rules=RULES,
        files={
            "fit.py": """\
import torch
from torch.utils.data import DataLoader, TensorDataset


def fit(model, optimizer, xs, ys, device):
    loader = DataLoader(TensorDataset(xs, ys), batch_size=256, shuffle=True)  # TL101: DataLoader(
    for x, y in loader:
        loss = model(x.to(device, non_blocking=True), y.to(device, non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
        },
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("one_off_passes")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_one_off_passes(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
