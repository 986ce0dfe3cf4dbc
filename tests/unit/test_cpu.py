"""meta.json's ``found.cpu`` (triage/cpu.py): this CPU's vector ISA flags, and how another CPU's differ."""
from nnfuzz.triage.cpu import isa_difference, isa_flags, this_cpu


def test_this_cpu_names_only_vector_isa_flags():
    cpu = this_cpu()
    assert cpu["isa"] == sorted(cpu["isa"]) and all(f.startswith(("avx", "amx")) for f in cpu["isa"])
    assert "sse2" not in cpu["isa"] and cpu["isa"] == isa_flags()


def test_the_difference_names_the_flags_each_side_has_alone():
    here = isa_flags()
    assert isa_difference({"at": "x", "cpu": {"model": "M", "isa": here}}) == ""
    other = [f for f in here if f != "avx2"] + ["amx_tile"]
    said = isa_difference({"at": "x", "cpu": {"model": "M", "isa": other}})
    assert "lacks amx_tile" in said and "CPU 'M'" in said
    assert ("adds avx2" in said) == ("avx2" in here)


def test_a_bug_that_names_no_cpu_differs_from_none():
    assert isa_difference(None) == "" and isa_difference({"at": "x"}) == ""
    assert isa_difference({"at": "x", "cpu": "Xeon"}) == ""
