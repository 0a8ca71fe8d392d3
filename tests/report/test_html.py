"""report.html: the Markdown report as one page with its figures inlined."""

from __future__ import annotations

import base64
from pathlib import Path

from regbias.report.html import report_html, write_html_report

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


def test_linked_figures_are_embedded_and_tables_rendered(tmp_path: Path) -> None:
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "lda.png").write_bytes(PNG)
    markdown = "# r\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n![lda](figures/lda.png)\n"
    page = report_html(markdown, tmp_path)
    assert "<table>" in page and "<td>1</td>" in page
    assert f'src="data:image/png;base64,{base64.b64encode(PNG).decode()}"' in page
    assert "figures/lda.png" not in page


def test_missing_or_outside_figures_keep_their_link(tmp_path: Path) -> None:
    outside = tmp_path.parent / "outside.png"
    outside.write_bytes(PNG)
    page = report_html("![a](figures/none.png)\n\n![b](../outside.png)\n", tmp_path)
    assert 'src="figures/none.png"' in page and 'src="../outside.png"' in page


def test_write_html_report_beside_report_md(tmp_path: Path) -> None:
    assert write_html_report(tmp_path) is None
    (tmp_path / "report.md").write_text("## Findings\n\n- **Bottom line.** x\n")
    page = write_html_report(tmp_path)
    assert page == tmp_path / "report.html"
    assert "<strong>Bottom line.</strong>" in page.read_text()


def test_links_to_other_reports_point_to_their_pages(tmp_path: Path) -> None:
    page = report_html("[b](variant-b/report.md) and [c](https://x.org/report.md)\n", tmp_path)
    assert 'href="variant-b/report.html"' in page and 'href="https://x.org/report.md"' in page


def _noise_png(path: Path, seed: int) -> None:
    """A figure that hardly compresses: 500 x 400 pixels of noise (about 600 KB)."""
    import numpy as np
    from PIL import Image

    pixels = np.random.default_rng(seed).integers(0, 256, (400, 500, 3), dtype=np.uint8)
    Image.fromarray(pixels).save(path)


def test_a_multi_encoder_page_stays_within_its_budget(tmp_path: Path) -> None:
    """Heatmaps of several encoders side by side: figures embedded up to the budget, then named."""
    from regbias.report.html import PAGE_LIMIT

    (tmp_path / "figures").mkdir()
    links = []
    for i in range(24):
        _noise_png(tmp_path / "figures" / f"d{i}.png", i)
        links.append(f"![d{i}](figures/d{i}.png)")
    page = report_html("# r\n\n" + "\n\n".join(links) + "\n", tmp_path)
    assert len(page.encode("utf-8")) <= PAGE_LIMIT <= 6_000_000  # the viewer drew 6.0 MB
    assert 'src="data:image/png;base64,' in page  # the first figures are embedded, re-encoded
    assert "figures/d23.png: a separate artifact" in page
