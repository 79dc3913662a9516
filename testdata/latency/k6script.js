import http from 'k6/http';
import { sleep } from 'k6';

export const options = { vus: 1, iterations: 3, timeout: '2s' };

export default function () {
  http.get('http://127.0.0.1:18931/hello.txt');
  http.get('http://127.0.0.1:18931/missing');
  http.get('http://127.0.0.1:18939/closed', { timeout: '2s' });
  sleep(0.2);
}
