import ember


def test_add_and_sum():
    a = ember.ones(3)
    b = ember.arange(3)
    assert (a + b).tolist() == [1.0, 2.0, 3.0]
    assert (a + b).dtype is ember.float32
    assert ember.arange(10).sum().item() == 45
