"""The page of the one-page PDF summary (fpdf2), apart from :mod:`calculator.present.report` so that importing
the report's sentences does not import fpdf (a third of a second); only a PDF needs it."""

from __future__ import annotations

from pathlib import Path

from fpdf import FPDF

from calculator.present.money import CURRENCIES

FONT_DIRS = (Path("/usr/share/fonts/truetype/dejavu"), Path("/usr/share/fonts/dejavu"))


class _Pdf(FPDF):
    def __init__(self) -> None:
        super().__init__(orientation="P", unit="mm", format="A4")
        self.family = "Helvetica"
        for directory in FONT_DIRS:
            regular, bold = directory / "DejaVuSansCondensed.ttf", directory / "DejaVuSansCondensed-Bold.ttf"
            if regular.is_file() and bold.is_file():
                self.add_font("DejaVu", "", str(regular))
                self.add_font("DejaVu", "B", str(bold))
                self.family = "DejaVu"
                break
        self.set_auto_page_break(auto=False)
        self.set_margins(10, 10, 10)

    def close_fonts(self) -> None:
        """fpdf2 reads font files lazily and leaves them open until garbage collection; a server writing many
        PDFs closes them once the PDF is written."""
        for font in self.fonts.values():
            ttfont = getattr(font, "ttfont", None)
            if ttfont is not None:
                ttfont.close()

    def text_ok(self, text: str) -> str:
        if self.family == "DejaVu":
            return text
        for code, currency in CURRENCIES.items():  # a symbol the core font lacks (€, ₹) is written as its code
            if not _latin1(currency.symbol):
                text = text.replace(currency.symbol, f"{code} ")
        return text.encode("latin-1", "replace").decode("latin-1")


def _latin1(text: str) -> bool:
    try:
        text.encode("latin-1")
    except UnicodeEncodeError:
        return False
    return True
