"""hostcheck: the hosts' kernels against the test parameters (pure functions)."""

from orchestrator.sweep.hostcheck import check_congestion, congestion_problem

# net.ipv4.tcp_available_congestion_control as hosts report it
DEBIAN = "reno cubic"
WITH_BBR = "reno cubic bbr"


def test_every_host_offers_it():
    assert check_congestion("cubic", {"aws-us-east-1": DEBIAN, "gcp-us-east4": WITH_BBR}) == []
    assert congestion_problem("cubic", {"aws-us-east-1": DEBIAN}) is None


def test_hosts_lacking_it_come_back_in_the_order_given():
    hosts = {"gcp-us-east4": DEBIAN, "aws-us-east-1": WITH_BBR, "aws-eu-west-1": DEBIAN}
    assert check_congestion("bbr", hosts) == ["gcp-us-east4", "aws-eu-west-1"]


def test_names_are_whole_words_not_substrings():
    # "bbr" is not offered by a kernel that lists only "bbr2", nor "cubic" by "cubic2"
    assert check_congestion("bbr", {"h1": "reno bbr2"}) == ["h1"]
    assert check_congestion("cubic", {"h1": "reno  cubic2\n"}) == ["h1"]
    assert check_congestion("reno", {"h1": "reno  cubic\n"}) == []


def test_a_host_reporting_nothing_lacks_everything():
    assert check_congestion("cubic", {"h1": ""}) == ["h1"]
    assert check_congestion("cubic", {}) == []


def test_the_problem_is_one_line_naming_a_host_and_the_choices():
    hosts = {"aws-us-east-1": WITH_BBR, "gcp-us-east4": DEBIAN, "gcp-europe-west1": DEBIAN}
    line = congestion_problem("bbr", hosts)
    assert line is not None and "\n" not in line
    assert line.startswith("--congestion bbr: gcp-us-east4 (1 more) does not offer it")
    assert "pick one of cubic, reno" in line and "load tcp_bbr" in line
