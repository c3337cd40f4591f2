"""TL108 sync-call-in-loop beyond its examples: shapes met in real training code."""

from __future__ import annotations

from conftest import lint_source


def _found(code: str, text: str) -> list[int]:
    """Rows of `code`'s findings in `text`."""
    return [d.start.row for d in lint_source(code, text) if d.code == code]


def test_tl108_cache_freed_after_every_evaluation_batch_is_flagged():
    text = (
        "import torch\ndef evaluation_loop(self, dataloader):\n    for step, inputs in enumerate(dataloader):\n"
        "        logits = self.model(**inputs)\n        if self.args.batch_eval_metrics:\n            metrics = self.compute_metrics(logits)\n"
        "            del logits, inputs\n            torch.cuda.empty_cache()\n"
        "        elif (step + 1) % self.args.eval_accumulation_steps == 0:\n            torch.cuda.empty_cache()\n"
    )
    assert _found("TL108", text) == [8]


def test_tl108_cuda_event_timing_is_a_measurement():
    text = (
        "import torch\nstart, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)\n"
        "for x, y in loader:\n    start.record()\n    model(x).sum().backward()\n    optimizer.step()\n    end.record()\n"
        "    torch.cuda.synchronize()\n    times.append(start.elapsed_time(end))\n"
    )
    assert _found("TL108", text) == []
