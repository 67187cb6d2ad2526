"""Third-party software from official Helm charts, pinned: one module per add-on, values
apart from logic, each switched on by config. (The GPU operator, Gateway API and Kueue come
with their issues.)
"""
