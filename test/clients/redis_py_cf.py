"""redis-py's CF assertions against a running bfs: the CF lines of test_create and
test_bf_reserve, test_cf_add_and_insert and test_cf_exists_and_del of redis-py's
tests/test_bloom.py, statement for statement, through redis-py's own cf() commands with its
Python parser (those tests are marked "PythonParser only"), over RESP2.

Usage: python3 redis_py_cf.py PORT. Prints one "ok <test>" line per test; exits non-zero at the
first failed assertion. redis-py before 4.4 has no cf().reserve: its alias create is used there.
"""
import sys

import redis
from redis.connection import PythonParser


def client_for(port):
    pool = redis.ConnectionPool(host="127.0.0.1", port=port, decode_responses=True, parser_class=PythonParser)
    client = redis.Redis(connection_pool=pool)
    assert isinstance(client.cf(), redis.commands.bf.CFBloom)
    return client


def info_field(info, attribute, name):
    """CFInfo's attribute (RESP2) or the reply's field (a dict in newer redis-py)."""
    return info.get(name) if isinstance(info, dict) else getattr(info, attribute)


def test_create(client):
    assert client.cf().create("cuckoo", 1000)
    assert client.cf().create("cuckoo_e", 1000, expansion=1)
    assert client.cf().create("cuckoo_bs", 1000, bucket_size=4)
    assert client.cf().create("cuckoo_mi", 1000, max_iterations=10)


def test_bf_reserve(client):
    cf = client.cf()
    reserve = getattr(cf, "reserve", cf.create)
    assert reserve("cuckoo", 1000)
    assert reserve("cuckoo_e", 1000, expansion=1)
    assert reserve("cuckoo_bs", 1000, bucket_size=4)
    assert reserve("cuckoo_mi", 1000, max_iterations=10)


def test_cf_add_and_insert(client):
    assert client.cf().create("cuckoo", 1000)
    assert client.cf().add("cuckoo", "filter")
    assert not client.cf().addnx("cuckoo", "filter")
    assert 1 == client.cf().addnx("cuckoo", "newItem")
    assert [1] == client.cf().insert("captest", ["foo"])
    assert [1] == client.cf().insert("captest", ["foo"], capacity=1000)
    assert [1] == client.cf().insertnx("captest", ["bar"])
    assert [1] == client.cf().insertnx("captest", ["food"], nocreate="1")
    assert [0, 0, 1] == client.cf().insertnx("captest", ["foo", "bar", "baz"])
    assert [0] == client.cf().insertnx("captest", ["bar"], capacity=1000)
    assert [1] == client.cf().insert("empty1", ["foo"], capacity=1000)
    assert [1] == client.cf().insertnx("empty2", ["bar"], capacity=1000)
    info = client.cf().info("captest")
    assert 5 == info_field(info, "insertedNum", "Number of items inserted")
    assert 0 == info_field(info, "deletedNum", "Number of items deleted")
    assert 1 == info_field(info, "filterNum", "Number of filters")


def test_cf_exists_and_del(client):
    assert client.cf().create("cuckoo", 1000)
    assert client.cf().add("cuckoo", "filter")
    assert client.cf().exists("cuckoo", "filter")
    assert not client.cf().exists("cuckoo", "notexist")
    assert [1, 0] == client.cf().mexists("cuckoo", "filter", "notexist")
    assert 1 == client.cf().count("cuckoo", "filter")
    assert 0 == client.cf().count("cuckoo", "notexist")
    assert client.cf().delete("cuckoo", "filter")
    assert 0 == client.cf().count("cuckoo", "filter")


def main():
    client = client_for(int(sys.argv[1]))
    for test in (test_create, test_bf_reserve, test_cf_add_and_insert, test_cf_exists_and_del):
        client.flushdb()  # the tests' fixture
        test(client)
        print("ok", test.__name__, flush=True)


if __name__ == "__main__":
    main()
