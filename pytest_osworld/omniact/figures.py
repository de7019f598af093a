"""OmniACT's dataset figures, as its released scorer reports them (ratios of weighted sums).

The sums stand in :mod:`pytest_osworld.report.omniact_figures`, where the summary and the
HTML report use them on ``result.json`` data; this module re-exports them for the
scorings: :class:`SampleFigures` (one sample), :class:`DatasetFigures` and
:func:`dataset_figures` (the sums and ratios), :func:`by_domain` (all, desktop, web).
"""

from __future__ import annotations

from pytest_osworld.report.omniact_figures import (
    ALL,
    DOMAINS,
    ROW_FIELDS,
    DatasetFigures,
    SampleFigures,
    by_domain,
    dataset_figures,
)

__all__ = ["ALL", "DOMAINS", "ROW_FIELDS", "DatasetFigures", "SampleFigures", "by_domain", "dataset_figures"]
