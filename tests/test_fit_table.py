"""The stored memory-fit table agrees with the scalar memory model."""

from gpuprice.models.fit_table import memory_fit_table
from gpuprice.models.memory import estimate_memory
from gpuprice.models.workloads import load_workloads


def test_fit_table_matches_scalar_estimates_and_marks_one_least_complex_fit():
    workloads = load_workloads()[:3]
    table = memory_fit_table(workloads, gpu_counts=(1, 8), strategies=("none", "zero3"))
    assert set(table["workload"]) == {w.name for w in workloads}
    for w in workloads:
        row = table[
            (table.workload == w.name)
            & (table.gpu == "h100-sxm")
            & (table.gpu_count == 8)
            & (table.sharding == "zero3")
        ].iloc[0]
        assert abs(row.per_gpu_gb - estimate_memory(w.setup(gpus=8, sharding="zero3")).per_gpu_gb) < 1e-6
        assert row.fits == (row.planning_gb <= row.gpu_memory_gb + 1e-9)
    least = table[table.least_complex].groupby(["workload", "gpu", "gpu_count"]).size()
    assert (least == 1).all()
    assert table[table.least_complex]["verdict"].isin(["fits", "tight"]).all()
