"""Rasterization plans (block-order swizzles for L2 locality): T.use_swizzle(panel_size, order)."""

__all__ = ["Rasterization", "NoRasterization", "Rasterization2DRow", "Rasterization2DColumn"]


class Rasterization:
    panel_width_ = None

    @property
    def panel_width(self):
        if self.panel_width_ is None:
            raise ValueError(f"{type(self).__name__} has no panel width")
        return self.panel_width_

    def get_code(self):
        return []


class NoRasterization(Rasterization):
    def __repr__(self):
        return "<NoRasterization>"


class Rasterization2DRow(Rasterization):
    """Row-major panels `panel_width` blocks wide: T.use_swizzle(panel_width, order="row")."""

    def __init__(self, panel_width=4):
        self.panel_width_ = panel_width

    def __repr__(self):
        return f"<Rasterization2DRow({self.panel_width_})>"


class Rasterization2DColumn(Rasterization):
    """Column-major panels: T.use_swizzle(panel_width, order="col")."""

    def __init__(self, panel_width=4):
        self.panel_width_ = panel_width

    def __repr__(self):
        return f"<Rasterization2DColumn({self.panel_width_})>"
