"""Delayed delivery: ``ScheduleMessageService`` (store/schedule, RocketMQ 4.9.3)."""

from mqlab.store.schedule.schedule_message_service import ScheduleMessageService

__all__ = ["ScheduleMessageService"]
