"""The training loop's speed-ups compute what the study's recipe computes: the fused AdamW step
under bf16-mixed (clipped by the module, since Lightning refuses a fused optimiser under any
mixed precision) ends in the same weights and logged loss as the foreach step Lightning clips;
the held heap (``callbacks.heap``) changes where memory comes from, and nothing computed."""

from __future__ import annotations

import ctypes
import json
import platform
from types import SimpleNamespace

import lightning as L
import pytest
import torch

from benevaudit.audit.module import DialogueClassifier


def tiny_module() -> DialogueClassifier:
    from benevaudit.encoders.models import load_classifier

    model = load_classifier("tiny", seed=0)
    return DialogueClassifier("tiny", json.loads(model.config.to_json_string()), lr=1e-3,
                              model=model)


@pytest.mark.parametrize("precision, fused", [("32-true", True), ("bf16-mixed", True),
                                              ("16-mixed", False)])
def test_fused_adamw_wherever_no_loss_scaler_sits_before_the_step(precision, fused):
    module = tiny_module()
    module._trainer = SimpleNamespace(precision=precision, estimated_stepping_batches=10)
    assert module.configure_optimizers()["optimizer"].defaults["fused"] is fused


def batches(n: int) -> list[dict[str, torch.Tensor]]:
    """``n`` fixed batches of 4 dialogues x 16 tokens."""
    g = torch.Generator().manual_seed(1)
    return [{"input_ids": torch.randint(1000, 2000, (4, 16), generator=g),
             "attention_mask": torch.ones(4, 16, dtype=torch.long),
             "labels": torch.randint(0, 3, (4,), generator=g)} for _ in range(n)]


def fit(force_foreach: bool, clip: float) -> tuple[dict[str, torch.Tensor], float, bool]:
    """Four bf16-mixed steps on fixed batches; the weights, the last logged loss, fused."""
    torch.manual_seed(0)
    module = tiny_module()
    if force_foreach:  # the loop before: foreach AdamW, clipped by Lightning's precision plugin
        module._scaled = lambda: True
    trainer = L.Trainer(accelerator="cpu", devices=1, max_steps=4, precision="bf16-mixed",
                        gradient_clip_val=clip, logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False)
    loader = torch.utils.data.DataLoader(batches(4), batch_size=None)
    trainer.fit(module, train_dataloaders=loader)
    fused = bool(trainer.optimizers[0].defaults["fused"])
    state = {k: v.detach().clone() for k, v in module.model.state_dict().items()}
    return state, float(trainer.callback_metrics["train/loss"]), fused


def test_fused_bf16_step_gives_the_weights_and_loss_of_the_foreach_step():
    ours, loss, fused = fit(force_foreach=False, clip=0.05)
    before, loss_before, fused_before = fit(force_foreach=True, clip=0.05)
    assert fused and not fused_before
    assert loss == pytest.approx(loss_before, rel=1e-5)
    for name, value in ours.items():
        torch.testing.assert_close(value, before[name], rtol=1e-4, atol=1e-6, msg=name)
    unclipped, _, _ = fit(force_foreach=False, clip=0.0)   # the clipping bites at 0.05
    assert any(not torch.allclose(unclipped[k], ours[k], rtol=1e-4, atol=1e-6) for k in ours)


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3, float("nan")])
def test_clipping_gives_the_gradients_of_clip_grad_norm(scale):
    """Within the bound the multiply by 1.0 is skipped; beside it, and for a non-finite norm,
    the gradients are bit for bit those of ``torch.nn.utils.clip_grad_norm_``."""
    from benevaudit.audit.module import clip_grad_norm

    g = torch.Generator().manual_seed(0)
    grads = [torch.randn(shape, generator=g) * scale for shape in [(64, 32), (32,), (7, 3, 5)]]
    ours = [torch.nn.Parameter(torch.zeros_like(x)) for x in grads]
    theirs = [torch.nn.Parameter(torch.zeros_like(x)) for x in grads]
    for p, q, x in zip(ours, theirs, grads):
        p.grad, q.grad = x.clone(), x.clone()
    clip_grad_norm(ours, 1.0)
    torch.nn.utils.clip_grad_norm_(theirs, 1.0)
    for p, q in zip(ours, theirs):
        assert torch.equal(p.grad, q.grad) or (p.grad.isnan().all() and q.grad.isnan().all())


class MallInfo2(ctypes.Structure):
    """glibc's ``struct mallinfo2`` (glibc >= 2.33): ``hblkhd`` counts bytes in mmapped blocks."""

    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                 "uordblks", "fordblks", "keepcost")]


def mallinfo() -> MallInfo2:
    from benevaudit.audit.heap import glibc

    libc = glibc()
    libc.mallinfo2.restype = MallInfo2
    return libc.mallinfo2()


def mmaps_a_large_tensor() -> bool:
    """Whether a fresh tensor larger than all the heap's free memory together (so no freed chunk
    can hold it) and than any mmap threshold lives in its own mmapped block (glibc's own
    policy), rather than at a grown top of the heap."""
    info = mallinfo()
    size = 64 * 2**20 + int(info.fordblks)
    x = torch.empty(size // 4)    # float32, its pages never touched
    grew = int(mallinfo().hblkhd) - int(info.hblkhd) >= size - 2**20
    del x
    return grew


needs_glibc = pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc"
    or not hasattr(ctypes.CDLL(None), "mallinfo2"), reason="callbacks.heap acts on glibc >= 2.33")


@needs_glibc
def test_held_heap_serves_forward_from_the_heap_for_the_fit_only():
    from benevaudit.audit.heap import HeldHeap

    assert mmaps_a_large_tensor()
    seen: list[bool] = []

    class During(L.Callback):   # after HeldHeap's own hook: as a batch starts its forward
        def on_train_batch_start(self, *_: object) -> None:
            seen.append(mmaps_a_large_tensor())

    torch.manual_seed(0)
    trainer = L.Trainer(accelerator="cpu", devices=1, max_steps=2, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, callbacks=[HeldHeap(64), During()])
    trainer.fit(tiny_module(), train_dataloaders=torch.utils.data.DataLoader(
        batches(2), batch_size=None))
    assert seen == [False, False]       # in every forward of the fit: from the heap
    assert mmaps_a_large_tensor()        # after it: glibc's policy again


@needs_glibc
@pytest.mark.parametrize("precision", ["32-true", "bf16-mixed"])
def test_held_heap_trains_the_same_weights(precision):
    """Where memory comes from changes nothing computed: the same weights, bit for bit."""
    from benevaudit.audit.heap import HeldHeap

    def weights(callbacks: list) -> dict[str, torch.Tensor]:
        torch.manual_seed(0)
        module = tiny_module()
        trainer = L.Trainer(accelerator="cpu", devices=1, max_steps=3, precision=precision,
                            gradient_clip_val=1.0, logger=False, enable_checkpointing=False,
                            enable_progress_bar=False, enable_model_summary=False,
                            callbacks=callbacks)
        trainer.fit(module, train_dataloaders=torch.utils.data.DataLoader(
            batches(3), batch_size=None))
        return {k: v.detach().clone() for k, v in module.model.state_dict().items()}

    held, plain = weights([HeldHeap(64)]), weights([])
    assert held.keys() == plain.keys()
    for name in held:
        assert torch.equal(held[name], plain[name]), name


@needs_glibc
def test_held_heap_gives_the_policy_back_when_a_fit_fails():
    from benevaudit.audit.heap import HeldHeap

    class Fail(L.Callback):
        def on_train_batch_start(self, *_: object) -> None:
            raise RuntimeError("stop here")

    trainer = L.Trainer(accelerator="cpu", devices=1, max_steps=2, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, callbacks=[HeldHeap(64), Fail()])
    with pytest.raises(RuntimeError, match="stop here"):
        trainer.fit(tiny_module(), train_dataloaders=torch.utils.data.DataLoader(
            batches(2), batch_size=None))
    assert mmaps_a_large_tensor()
