"""Third-party software from official Helm charts, pinned: one module per add-on, values
apart from logic, each switched on by config (`gpu_operator`; Gateway API and Kueue come
with their issues), plus what a chart needs beside it on a given cloud
(`gke_driver_installer`).
"""
