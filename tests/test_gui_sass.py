"""The window's SASS tab (issue 32): ptxas's listing made in the background when shown, each line
with its PTX row and predicted share; lines and BLOCK-table rows select each other; an imported
source page adds measured shares and ranks the disagreements."""

from __future__ import annotations

import pytest

from engine.sass import SassListing
from tests.test_gui_support import make_window
from tests.test_source_counters import _page, _sass_rows


@pytest.fixture()
def window(qtbot, tmp_path, monkeypatch):
    return make_window(qtbot, tmp_path, monkeypatch)


def _shown(window, qtbot):
    panel = window.sass_panel
    window.side_tabs.setCurrentWidget(panel)
    qtbot.waitUntil(lambda: panel.listing is not None or "No SASS" in panel.caption.text(), timeout=60_000)
    if panel.listing is None:
        pytest.skip(panel.caption.text())
    qtbot.waitUntil(lambda: panel.model_.rowCount() > 0, timeout=10_000)
    return panel


def test_sass_tab_lists_and_links(window, qtbot):
    panel = window.sass_panel
    assert panel.listing is None, "not assembled while hidden"
    panel = _shown(window, qtbot)
    assert isinstance(panel.listing, SassListing)
    assert panel.model_.rowCount() == len(panel.lines) >= len(panel.listing.lines)
    shares = [line.predicted_share for line in panel.lines]
    assert sum(shares) == pytest.approx(1.0)
    assert panel.table.isColumnHidden(4), "no measured column before an import"
    # a line selects its PTX instruction in the BLOCK table ...
    k = next(k for k, line in enumerate(panel.shown_lines) if line.instructions and "LDG" in line.text)
    panel.table.selectRow(k)
    selected = window.block_view.selectionModel().selectedRows()
    number = panel.shown_lines[k].instructions[0]
    assert [window.block_view.model_.rows[i.row()].index for i in selected] == [number]
    # ... and the BLOCK table's selection marks that instruction's lines
    assert panel._marked == {number}


def test_import_source_counters_ranks_disagreements(window, qtbot, tmp_path):
    panel = _shown(window, qtbot)
    listing = panel.listing
    samples = [round(1000 * line.predicted_share) for line in panel.lines if line.address is not None]
    worst = max(range(len(samples)), key=lambda k: samples[k])
    samples[worst] = 0                      # the model's hottest line measured cold
    page = tmp_path / "page.csv"
    page.write_text(_page(_sass_rows(listing, samples)), encoding="utf-8")
    panel.import_counters(page)
    qtbot.waitUntil(lambda: panel.comparison is not None, timeout=10_000)
    assert not panel.table.isColumnHidden(4) and panel.ranked_box.isChecked()
    assert panel.shown_lines[0].key == listing.lines[worst].position
    assert panel.model_.text(0, 5).startswith("-")
    assert "Largest disagreement" in panel.caption.text()
    bad = tmp_path / "bad.csv"
    bad.write_text("not,a,source,page\n1,2,3,4\n", encoding="utf-8")
    with pytest.raises(Exception, match="source table"):
        panel.import_counters(bad)
    assert panel.comparison is not None, "a refused import leaves the last one"
