"""The PMI-1 server without processes: parsing and exact reply formats."""
import pytest

from vmpi import pmi


def replies(events):
    return [(e.rank, e.data.decode()) for e in events if isinstance(e, pmi.Reply)]


def test_parse_simple_command():
    assert pmi.parse_command("cmd=put kvsname=kvs_1_0 key=k value=v\n") == (
        "put", {"kvsname": "kvs_1_0", "key": "k", "value": "v"})
    assert pmi.parse_command("cmd=barrier_in") == ("barrier_in", {})


def test_parse_abort_message_keeps_spaces_and_equals():
    cmd, a = pmi.parse_command(
        "cmd=abort exitcode=5 message=application called MPI_Abort(MPI_COMM_WORLD, 5) - x=1")
    assert cmd == "abort"
    assert a == {"exitcode": "5",
                 "message": "application called MPI_Abort(MPI_COMM_WORLD, 5) - x=1"}


def test_parse_value_with_spaces_and_escapes_is_verbatim():
    _, a = pmi.parse_command("cmd=put kvsname=k key=x value=a b\\ c")
    assert a["value"] == "a b\\ c"
    _, a = pmi.parse_command("cmd=put value=one two key=x kvsname=k")
    assert a == {"value": "one two", "key": "x", "kvsname": "k"}


@pytest.mark.parametrize("line", ["", "put key=x", "cmd= key=x", "cmd=put =x", "cmd=put k!y=1"])
def test_parse_rejects_garbage(line):
    with pytest.raises(ValueError):
        pmi.parse_command(line)


def test_reply_formats_match_hydra():
    s = pmi.PMIServer(2, "kvs_42_0")
    feed = lambda r, line: replies(s.feed(r, (line + "\n").encode()))
    assert feed(0, "cmd=init pmi_version=1 pmi_subversion=1") == [
        (0, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n")]
    assert s.initialized(0) and not s.initialized(1)
    assert feed(0, "cmd=get_maxes") == [
        (0, "cmd=maxes rc=0 kvsname_max=256 keylen_max=256 vallen_max=1024\n")]
    assert feed(0, "cmd=get_appnum") == [(0, "cmd=appnum appnum=0\n")]
    assert feed(0, "cmd=get_my_kvsname") == [(0, "cmd=my_kvsname kvsname=kvs_42_0\n")]
    assert feed(1, "cmd=get_universe_size") == [(1, "cmd=universe_size size=2\n")]
    assert feed(0, "cmd=put kvsname=kvs_42_0 key=card0 value=tcp://1.2.3.4:5") == [
        (0, "cmd=put_result rc=0 msg=success\n")]
    assert feed(1, "cmd=get kvsname=kvs_42_0 key=card0") == [
        (1, "cmd=get_result rc=0 msg=success value=tcp://1.2.3.4:5\n")]
    assert feed(1, "cmd=get kvsname=kvs_42_0 key=nope") == [
        (1, "cmd=get_result rc=-1 msg=key_nope_not_found value=unknown\n")]
    assert feed(1, "cmd=get kvsname=kvs_42_0 key=PMI_process_mapping") == [
        (1, "cmd=get_result rc=0 msg=success value=(vector,(0,1,2))\n")]
    assert feed(0, "cmd=finalize") == [(0, "cmd=finalize_ack\n")]
    assert s.finalized(0) and not s.finalized(1)


def test_barrier_releases_everyone_only_when_all_are_in():
    s = pmi.PMIServer(3, "kvs")
    assert s.feed(0, b"cmd=barrier_in\n") == []
    assert s.feed(2, b"cmd=barrier_in\n") == []
    assert s.ranks_in_barrier() == [0, 2]
    out = replies(s.feed(1, b"cmd=barrier_in\n"))
    assert sorted(out) == [(0, "cmd=barrier_out\n"), (1, "cmd=barrier_out\n"), (2, "cmd=barrier_out\n")]
    assert s.ranks_in_barrier() == []
    # a second barrier works the same way
    assert s.feed(1, b"cmd=barrier_in\n") == []
    assert s.barrier_epoch == 1


def test_lines_split_across_reads_and_batched():
    s = pmi.PMIServer(1, "kvs")
    assert s.feed(0, b"cmd=put kvsname=kvs key=a va") == []
    out = replies(s.feed(0, b"lue=1\ncmd=get kvsname=kvs key=a\ncmd=abort exit"))
    assert out == [(0, "cmd=put_result rc=0 msg=success\n"),
                   (0, "cmd=get_result rc=0 msg=success value=1\n")]
    # an unterminated last line still counts when the rank closes the socket
    assert s.feed(0, b"code=4") == []
    assert s.eof(0) == [pmi.Abort(0, 4, "")]


def test_later_put_wins_and_no_put_is_lost():
    s = pmi.PMIServer(2, "kvs")
    for i in range(500):
        s.feed(i % 2, f"cmd=put kvsname=kvs key=k{i} value=v{i}\n".encode())
    s.feed(0, b"cmd=put kvsname=kvs key=k7 value=new\n")
    assert all(s.kvs["kvs"][f"k{i}"] == (f"v{i}" if i != 7 else "new") for i in range(500))


def test_abort_event_and_no_reply():
    s = pmi.PMIServer(2, "kvs")
    ev = s.feed(1, b"cmd=abort exitcode=7 message=out of cheese\n")
    assert ev == [pmi.Abort(1, 7, "out of cheese")]
    ev = s.feed(0, b"cmd=abort exitcode=3\n")
    assert ev == [pmi.Abort(0, 3, "")]


def test_unknown_command_gets_an_error_reply_not_silence():
    s = pmi.PMIServer(1, "kvs")
    ev = s.feed(0, b"cmd=frobnicate x=1\n")
    assert any(isinstance(e, pmi.ProtocolError) for e in ev)
    assert replies(ev) == [(0, "cmd=frobnicate_result rc=-1 msg=unsupported_command_frobnicate\n")]


def test_pmi2_init_is_refused():
    s = pmi.PMIServer(1, "kvs")
    out = replies(s.feed(0, b"cmd=init pmi_version=2 pmi_subversion=0\n"))
    assert out == [(0, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1\n")]
    assert not s.initialized(0)


def test_spawn_block_is_refused_after_endcmd():
    s = pmi.PMIServer(1, "kvs")
    assert replies(s.feed(0, b"mcmd=spawn\nnprocs=1\nexecname=a\ntotspawns=1\n")) == []
    out = replies(s.feed(0, b"spawnssofar=1\nargcnt=0\nendcmd\n"))
    assert out == [(0, "cmd=spawn_result rc=-1 msg=spawn_not_supported\n")]
    # the connection is usable afterwards
    assert replies(s.feed(0, b"cmd=get_appnum\n")) == [(0, "cmd=appnum appnum=0\n")]


def test_process_mapping_lists_each_node_block():
    assert pmi.process_mapping([4]) == "(vector,(0,1,4))"
    assert pmi.process_mapping([2, 2, 2, 2]) == "(vector,(0,4,2))"
    # uneven blocks and empty VMs (fewer ranks than VMs)
    assert pmi.process_mapping([3, 3, 2, 0]) == "(vector,(0,2,3),(2,1,2))"
