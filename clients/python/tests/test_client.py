import unittest

import grpc

from shardtrain.client import Client, ShardTrainError


class ClientTest(unittest.TestCase):
    def test_an_address_without_a_port_is_refused(self):
        for target in ("localhost", "localhost:http", ":50051", ""):
            with self.assertRaisesRegex(ValueError, "HOST:PORT"):
                Client(target)

    def test_a_token_without_tls_or_an_unreadable_ca_or_token_file_is_refused_naming_it(self):
        with self.assertRaisesRegex(ValueError, "needs TLS"):
            Client("127.0.0.1:1", token="secret")
        with self.assertRaisesRegex(ValueError, "the CA certificate /no/such/ca.pem"):
            Client("127.0.0.1:1", ca_file="/no/such/ca.pem", token="secret")
        with self.assertRaisesRegex(ValueError, "the token file /no/such/token"):
            Client("127.0.0.1:1", ca_file="/no/such/ca.pem", token_file="/no/such/token")

    def test_where_nothing_listens_calls_fail_with_unavailable_naming_the_address(self):
        with Client("127.0.0.1:1", timeout=2) as c:
            with self.assertRaises(ShardTrainError) as e:
                c.connect(0.5)
            self.assertEqual(grpc.StatusCode.UNAVAILABLE, e.exception.code)
            self.assertIn("127.0.0.1:1", str(e.exception))
            with self.assertRaises(ShardTrainError) as e:
                c.status()
            self.assertEqual(grpc.StatusCode.UNAVAILABLE, e.exception.code)
            self.assertEqual("GetStatus", e.exception.call)
