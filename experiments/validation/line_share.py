"""What share of their NICs' line rate NCCL's ring moved on the shipped public multi-NIC series.

The bus bandwidth of the largest allreduces (1 GiB and up) on 3 or more nodes, where NCCL runs its
ring (on 2 nodes it may run its tree), over the NICs' summed line rate: AWS p4d over EFA
(NVIDIA/nccl#527), A100 servers over 8 x 100 Gb/s RoCE (NVIDIA/nccl-tests#169), and the Azure ND
A100 v4 logs of 4 nodes (data/calibration). usage: /usr/bin/python3 experiments/validation/line_share.py
"""
import csv, os, re

os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
def share(busbw, nics, gbps): return 100 * busbw / (nics * gbps / 8)
rows = []
for x in csv.DictReader(open('data/validation/nccl-tests-efa-p4d-scale/busbw.csv')):
    if int(x['nodes']) >= 3:
        rows.append(('4 x 100 Gb/s EFA, AWS p4d', x['nodes'], float(x['busbw_out_of_place_GBps']), int(x['nics_per_node']), float(x['nic_Gbps'])))
for x in csv.DictReader(open('data/validation/nccl-tests-roce-a100-scale/busbw.csv')):
    if int(x['nodes']) >= 3:
        rows.append(('8 x 100 Gb/s RoCE', x['nodes'], float(x['busbw_GBps']), int(x['nics_per_node']), float(x['nic_Gbps'])))
for line in open('data/calibration/nccl-tests-echo-azure-a100-ib/nccl_32.log'):
    m = re.match(r'^(?:\[[0-9,]+\]<stdout>:)?\s+1073741824\s+\d+\s+float\s+sum\s+[0-9.]+\s+[0-9.]+\s+([0-9.]+)', line)
    if m: rows.append(('8 x 200 Gb/s HDR InfiniBand, Azure ND A100 v4', '4', float(m.group(1)), 8, 200.0))
print('| fabric | nodes | measured busbw, 1 GiB and up | NICs\' line rate | share |')
print('|---|---|---|---|---|')
for f, n, b, k, g in rows:
    print(f'| {f} | {n} | {b:g} GB/s | {k * g / 8:g} GB/s | {share(b, k, g):.0f} % |')
