"""``python -m tilejit demo`` runs every kernel and they all match numpy."""
from tilejit.demo import main


def test_demo_on_interpreter(capsys):
    assert main(["--backend", "interpreter"]) == 0
    out = capsys.readouterr().out
    assert "5/5 kernels match numpy" in out
    assert out.count("bit-exact") == 3 and "interpreter" in out
