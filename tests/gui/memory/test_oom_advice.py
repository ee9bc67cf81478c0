"""After an out-of-memory stop, the banner's advice: the batch predicted to fit (which Retry then offers) and
the cheapest change that makes the requested batch fit; a watched script's banner stays without either."""

from __future__ import annotations

import dataclasses

from gpu_train_monitor.events.events import OutOfMemory
from gpu_train_monitor.events.module_bytes import ModuleBytes
from gpu_train_monitor.gui.memory.oom_banner import OomBanner
from tests.support.gui_support import FAST

ADVICE_TIMEOUT_MS = 120_000


class SmallDevice:
    """The selected device's probe, as a 100 MB device would read."""

    def __init__(self, probe, capacity_bytes: int) -> None:
        self.probe, self.capacity_bytes, self.device = probe, capacity_bytes, probe.device

    def sample(self):
        return dataclasses.replace(self.probe.sample(), capacity_bytes=self.capacity_bytes)


def out_of_memory(batch_size: int) -> OutOfMemory:
    return OutOfMemory(
        3, batch_size, 2**26, 0, 0, "stop", None, f"out of memory at step 3 with batch size {batch_size}"
    )


def test_the_banner_names_the_batch_that_fits_and_retry_offers_it(qtbot, window):
    window.parts.form.set_config(FAST.replace(synthetic_samples=4096, batch_size=256))
    window.parts.insight.probe = SmallDevice(window.probe, 100_000_000)  # tiny-cnn at 256 needs ~170 MB
    window.parts.insight.out_of_memory(out_of_memory(256))
    window.parts.insight.run_ended()
    banner = window.parts.insight.oom_banner
    assert banner.advice.text() == "Predicting what would fit…"
    qtbot.waitUntil(lambda: banner.advice.text().startswith("Predicted: "), timeout=ADVICE_TIMEOUT_MS)
    fits = int(banner.retry_button.text().removeprefix("Retry with batch "))
    assert 64 < fits < 256  # the batch predicted to fit, not half
    assert banner.advice.text() == (
        f"Predicted: batch {fits} fits as configured; no single change makes batch 256 fit."
    )


def test_a_watched_scripts_banner_gets_no_advice(qtbot, window):
    window.parts.insight.out_of_memory(out_of_memory(256), retry=False)
    window.parts.insight.run_ended()
    banner = window.parts.insight.oom_banner
    assert banner.isVisible() and banner.retry_button.isHidden() and banner.dismiss_button.text() == "Dismiss"
    assert banner.advice.isHidden() and not window.parts.insight.advice_task.busy


def test_advice_of_a_smaller_batch_replaces_half_in_retry(qtbot):
    banner = OomBanner()
    qtbot.addWidget(banner)
    banner.offer(256, "Out of memory during training", "details")
    assert banner.retry_button.text() == "Retry with batch 128"
    banner.show_advice("Predicted: batch 190 fits as configured", 190)
    assert banner.retry_button.text() == "Retry with batch 190" and not banner.advice.isHidden()
    with qtbot.waitSignal(banner.retry_smaller) as retried:
        banner.retry_button.click()
    assert retried.args == [190]
    banner.show_advice("Predicted: batch 300 fits as configured", 300)  # larger than what ran out: not offered
    assert banner.retry_button.text() == "Retry with batch 190"


def with_autopsy(event: OutOfMemory, fits_batch: int | None = 96) -> OutOfMemory:
    held = (
        ModuleBytes("layer4", activations_bytes=3 * 10**9, params_bytes=10**8),
        ModuleBytes("layer3", activations_bytes=10**9),
    )
    return dataclasses.replace(
        event,
        holders=held,
        holders_total_bytes=8 * 10**9,
        holders_source="measured",
        holders_step=5,
        fits_batch=fits_batch,
    )


def test_the_banner_lists_what_held_the_memory_and_retry_offers_the_batch_predicted_to_fit(qtbot):
    banner = OomBanner()
    qtbot.addWidget(banner)
    banner.offer(256, "Out of memory during training", "details")
    banner.show_autopsy(with_autopsy(out_of_memory(256)))
    table = banner.holders.text()
    assert not banner.holders.isHidden()
    assert table.startswith("Largest holders by module (measured at step 5), share of 8.00 GB:<table")
    assert "<code>layer4</code>" in table and "3.10 GB" in table and "39%" in table  # 3.1 of 8 GB
    assert "<code>layer3</code>" in table and "1.00 GB" in table and "13%" in table  # halves up, as the log
    assert banner.fits.text() == "batch 96 is predicted to fit" and not banner.fits.isHidden()
    assert banner.retry_button.text() == "Retry with batch 96"  # the prediction's batch, not half
    banner.show_advice("Predicting what would fit…")
    assert not banner.fits.isHidden()  # until the search says it
    banner.show_advice("Predicted: batch 100 fits as configured", 100)
    assert banner.fits.isHidden() and banner.retry_button.text() == "Retry with batch 100"  # one figure, the search's


def test_a_banner_without_an_autopsy_or_a_smaller_fit_keeps_half(qtbot):
    banner = OomBanner()
    qtbot.addWidget(banner)
    banner.offer(256, "Out of memory during training", "details")
    banner.show_autopsy(out_of_memory(256))  # recorded before the autopsy: nothing to list
    assert banner.holders.isHidden() and banner.fits.isHidden()
    banner.offer(256, "Out of memory during training", "details")
    banner.show_autopsy(with_autopsy(out_of_memory(256), fits_batch=0))
    assert banner.fits.text() == "not even batch 1 is predicted to fit"
    assert banner.retry_button.text() == "Retry with batch 128"


def test_a_watched_scripts_banner_lists_the_holders_and_the_batch_that_fits_without_retry(qtbot, window):
    window.parts.insight.out_of_memory(with_autopsy(out_of_memory(256)), retry=False)
    window.parts.insight.run_ended()
    banner = window.parts.insight.oom_banner
    assert banner.isVisible() and banner.retry_button.isHidden()
    assert banner.holders.isVisible() and banner.fits.text() == "batch 96 is predicted to fit"
