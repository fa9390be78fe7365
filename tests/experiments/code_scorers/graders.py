"""Code scorers the tests run in a subprocess: each shape of answer, and each way to go wrong."""

import time


def score(output, expected, item):
    return output.strip() == (expected or "")


def partial(output, expected, item):
    return {"score": 0.5 if item["id"] == "q1" else 1.0, "reason": f"looked at {item['id']}"}


def hangs(output, expected, item):
    while True:
        time.sleep(1)


def raises(output, expected, item):
    return {"a": 1}["b"]


def hog(output, expected, item):
    return len(bytearray(2 * 1024 * 1024 * 1024))


def junk(output, expected, item):
    return "yes"


def chatty(output, expected, item):
    print("not the answer")
    return True


def fails_on_q2(output, expected, item):
    if item["id"] == "q2":
        return {"a": 1}["b"]
    return output.strip() == expected
