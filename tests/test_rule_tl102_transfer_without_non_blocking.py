"""TL102 transfer-without-non-blocking beyond its examples: values read on the host, fix safety, what TL101's pinning enables."""

from __future__ import annotations

from conftest import fixed_source, lint_source

from torchlint.diagnostics import Applicability

LOOP = "    for x, y in loader:\n        x = x.to(device)\n        model(x).sum().backward()\n"
PINNED = "from torch.utils.data import DataLoader\n\nloader = DataLoader(ds, num_workers=4, pin_memory=True)\n"


def test_a_value_read_on_the_host_in_the_next_statement_is_not_flagged():
    # labels collected for after the loop: `y`'s copy is read at once, but the iteration does
    # not wait by design (a scalar read such as `int(y)` would drain it: tests/test_transfer_paced.py)
    text = (
        PINNED
        + "for x, y in loader:\n    y = y.to(device)\n    seen.extend(y.tolist())\n    x = x.to(device)\n"
    )
    found = lint_source("TL102", text)
    assert [d.start.row for d in found] == [7]


def test_non_blocking_is_a_safe_fix_and_idempotent():
    text = (
        PINNED
        + "for i, (x, y) in enumerate(loader):\n    x = x.to(\n        device,\n    )\n    model(x)\n"
    )
    found = lint_source("TL102", text)
    assert len(found) == 1 and found[0].fix.applicability is Applicability.SAFE
    fixed = fixed_source("TL102", text, unsafe=False)
    assert "x = x.to(\n        device,\n        non_blocking=True,\n    )\n" in fixed
    assert fixed_source("TL102", fixed, unsafe=False) == fixed


def test_loops_over_other_iterables_are_not_flagged():
    text = (
        PINNED + "for x in cached_batches:\n    x = x.to(device)\nfor x, y in loader:\n    pass\n"
    )
    assert lint_source("TL102", text) == []


def test_pinning_added_by_tl101_makes_tl102_add_non_blocking():
    text = (
        "from torch.utils.data import DataLoader\n\n\ndef main():\n    loader = DataLoader(ds, batch_size=8)\n"
        + LOOP
        + '\n\nif __name__ == "__main__":\n    main()\n'
    )
    fixed = fixed_source("TL101,TL102", text)
    assert "DataLoader(ds, batch_size=8, num_workers=4, pin_memory=True)" in fixed
    assert "x = x.to(device, non_blocking=True)" in fixed
